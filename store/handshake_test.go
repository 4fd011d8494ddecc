package store_test

import (
	"net/http"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// TestObserveHandshake_Stateless: what a 2026-07-28 session's info keeps
// of its version. The frames are go-sdk's client's; the refusal is
// server-everything's answer to a server/discover it does not know.
func TestObserveHandshake_Stateless(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"gocli","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`
	probeHeader := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
	type frame struct {
		dir    store.Dir
		text   string
		header http.Header // the request header an HTTP recording keeps
	}
	tests := []struct {
		name            string
		frames          []frame
		version, client string
	}{
		{"discover answered with the version", []frame{
			{store.C2S, discover, probeHeader},
			{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{}}}`, probeHeader},
		}, "2026-07-28", `{"name":"gocli","version":"1.0.0"}`},
		{"discover answered with the version, over stdio", []frame{
			{store.C2S, discover, nil},
			{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}`, nil},
		}, "2026-07-28", `{"name":"gocli","version":"1.0.0"}`},
		{"discover answered without it, over stdio", []frame{
			{store.C2S, discover, nil},
			{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"],"capabilities":{}}}`, nil},
		}, "", `{"name":"gocli","version":"1.0.0"}`},
		{"discover answered without it", []frame{
			{store.C2S, discover, probeHeader},
			{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{}}}`, probeHeader},
		}, "", `{"name":"gocli","version":"1.0.0"}`},
		{"discover refused", []frame{
			{store.C2S, discover, probeHeader},
			{store.S2C, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`, probeHeader},
		}, "", `{"name":"gocli","version":"1.0.0"}`},
		{"refused discover, then requests", []frame{
			{store.C2S, discover, probeHeader},
			{store.S2C, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}`, probeHeader},
			{store.C2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`, nil},
		}, "2026-07-28", `{"name":"gocli","version":"1.0.0"}`},
		{"a connection with no discover", []frame{
			{store.C2S, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`, nil},
			{store.C2S, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",` + meta + `}}`, nil},
			{store.C2S, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`, nil},
		}, "2026-07-28", `{"name":"gocli","version":"1.0.0"}`},
		{"initialize wins", []frame{
			{store.C2S, discover, probeHeader},
			{store.C2S, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c"}}}`, nil},
			{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`, probeHeader},
			{store.C2S, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`, nil},
		}, "2025-11-25", `{"name":"c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var info store.SessionInfo
			for i, f := range tt.frames {
				m := &store.Message{Seq: uint64(i + 1), Dir: f.dir, Frame: []byte(f.text)}
				if f.header != nil {
					m.HTTP = &store.HTTPMeta{Method: "POST", RequestHeader: f.header}
				}
				sum := store.Summarize(m)
				store.ObserveHandshake(&info, m, &sum)
			}
			h := info.Handshake
			if h.ProtocolVersion != tt.version || string(h.ClientInfo) != tt.client {
				t.Errorf("version %q, clientInfo %s; want %q, %s", h.ProtocolVersion, h.ClientInfo, tt.version, tt.client)
			}
		})
	}
}
