package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// The handshake's readers agree with what encoding/json read before them
// (json.Unmarshal into the same fields) for frames whose names are written
// exactly, and keep nothing of the frame's memory.
func TestParamsPair_AgreesWithEncodingJSON(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-\u0031\u0031-25","clientInfo":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"a"},"clientInfo":{"name":"b"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"gocli"}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":null}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":"x"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":["2026-07-28"]}}}`,
		` { "params" : { "_meta" : { "io.modelcontextprotocol/protocolVersion" : "v" , "io.modelcontextprotocol/clientInfo" : [ 1 ] } } } `,
		`{"params":{"_meta":{}}} x`,
		`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v"}}`,
		`[{"params":{}}]`,
		``,
	}
	for _, frame := range frames {
		t.Run(frame, func(t *testing.T) {
			var initReq struct {
				Params struct {
					ProtocolVersion string          `json:"protocolVersion"`
					ClientInfo      json.RawMessage `json:"clientInfo"`
				} `json:"params"`
			}
			wantOK := json.Unmarshal([]byte(frame), &initReq) == nil
			version, clientInfo, ok := initializeParams([]byte(frame))
			if ok != wantOK || ok && (version != initReq.Params.ProtocolVersion || string(clientInfo) != string(initReq.Params.ClientInfo)) {
				t.Errorf("initializeParams = %q, %s, %v; encoding/json read %q, %s, %v",
					version, clientInfo, ok, initReq.Params.ProtocolVersion, initReq.Params.ClientInfo, wantOK)
			}
			var metaReq struct {
				Params struct {
					Meta struct {
						Version    string          `json:"io.modelcontextprotocol/protocolVersion"`
						ClientInfo json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
					} `json:"_meta"`
				} `json:"params"`
			}
			wantOK = json.Unmarshal([]byte(frame), &metaReq) == nil
			version, clientInfo, ok = requestMeta([]byte(frame))
			if ok != wantOK || ok && (version != metaReq.Params.Meta.Version || string(clientInfo) != string(metaReq.Params.Meta.ClientInfo)) {
				t.Errorf("requestMeta = %q, %s, %v; encoding/json read %q, %s, %v",
					version, clientInfo, ok, metaReq.Params.Meta.Version, metaReq.Params.Meta.ClientInfo, wantOK)
			}
		})
	}
}

// A session's info lives as long as the session; the clientInfo it keeps
// must not be a window on the request that named it.
func TestRequestMeta_CopiesClientInfo(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"gocli"}},"arguments":{"blob":"` +
		strings.Repeat("A", 1<<16) + `"}}}`)
	_, clientInfo, ok := requestMeta(frame)
	if !ok || string(clientInfo) != `{"name":"gocli"}` {
		t.Fatalf("requestMeta = %s, %v", clientInfo, ok)
	}
	if cap(clientInfo) > 64 {
		t.Errorf("clientInfo has capacity %d: it shares the %d-byte frame", cap(clientInfo), len(frame))
	}
}

// BenchmarkRequestMeta_BigCall: what the store reads of the first
// request of a stateless session when that request is a 16 MiB tools/call
// (once a session, on the commit goroutine). The encoding/json
// sub-benchmark is the decode it replaced, for the ratio.
func BenchmarkRequestMeta_BigCall(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"blob":"` +
		strings.Repeat("A", 16<<20) + `"}}}`)
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			if v, _, ok := requestMeta(frame); !ok || v != "2026-07-28" {
				b.Fatal(v, ok)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			var req struct {
				Params struct {
					Meta struct {
						Version string `json:"io.modelcontextprotocol/protocolVersion"`
					} `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(frame, &req) != nil || req.Params.Meta.Version != "2026-07-28" {
				b.Fatal(req.Params.Meta.Version)
			}
		}
	})
}
