package store_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// FuzzBuildHAR: a JSONL export, however hand-edited, that imports makes a
// HAR that is JSON, in which every message of an HTTP session that has
// HTTP metadata is in exactly one entry, and no time is negative.
func FuzzBuildHAR(f *testing.F) {
	// Small seeds: the fuzzer minimizes what it finds, and that is slow
	// on inputs the size of a real cassette.
	f.Add([]byte(`{"session":"s1","info":{"transport":"streamable-http","upstream":"http://h/mcp","start":"2026-01-01T00:00:00Z"}}` + "\n" +
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00.000000001Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/call"},"http":{"method":"POST","path":"/mcp?a=b","request_header":{"Content-Type":["application/json"]},"stream":"post-body","stream_id":1}}` + "\n" +
		`{"session":"s1","seq":2,"dir":"s2c","time":"2026-01-01T00:00:00.000000002Z","message":{"jsonrpc":"2.0","method":"notifications/progress"},"http":{"method":"POST","path":"/mcp?a=b","status":200,"response_header":{"Content-Type":["text/event-stream"]},"stream":"post-sse","stream_id":1,"event_id":"e1","event_type":"message"}}` + "\n" +
		`{"session":"s1","seq":3,"dir":"s2c","time":"2026-01-01T00:00:00.000000003Z","raw":"a\nb","http":{"method":"GET","path":"/mcp","status":200,"stream":"get-sse","stream_id":2}}` + "\n" +
		`{"session":"s1","seq":4,"dir":"s2c","time":"2026-01-01T00:00:00.000000004Z","raw_base64":"/w==","http":{"method":"DELETE","path":"/mcp","status":404,"response_header":{"Content-Encoding":["gzip"]},"stream":"json","stream_id":3}}` + "\n"))
	const info = `{"session":"s1","info":{"transport":"sse","upstream":"http://h/sse","start":"2026-01-01T00:00:00Z"}}` + "\n"
	f.Add([]byte(info +
		`{"session":"s1","seq":1,"dir":"s2c","time":"2026-01-01T00:00:00.000000001Z","raw":"/message?s=1","http":{"method":"GET","path":"/sse","status":200,"stream":"legacy-sse","event_type":"endpoint"}}` + "\n" +
		`{"session":"s1","seq":2,"dir":"c2s","time":"2026-01-01T00:00:00.000000002Z","message":{"jsonrpc":"2.0","id":1,"method":"ping"},"http":{"method":"POST","path":"/message?s=1","stream":"post-body","stream_id":2}}` + "\n" +
		`{"session":"s1","seq":3,"dir":"c2s","time":"2026-01-01T00:00:00.000000003Z","message":{"jsonrpc":"2.0","id":2,"method":"ping"},"http":{"method":"POST","path":"/message?s=1","stream":"post-body","stream_id":2}}` + "\n" +
		`{"session":"s1","seq":4,"dir":"s2c","time":"2025-01-01T00:00:00Z","message":{"jsonrpc":"2.0","id":1,"result":{}},"http":{"method":"GET","path":"/sse","status":200,"stream":"legacy-sse","priming":["a"],"retry":"5"}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tape, err := store.ReadJSONL(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		h, _ := store.BuildHAR(tape, "fuzz")
		var out bytes.Buffer
		if err := h.Write(&out); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Log struct {
				Entries []struct {
					Pageref string
					Time    float64
					MCPTape struct {
						RequestSeq   uint64   `json:"request_seq"`
						ResponseSeqs []uint64 `json:"response_seqs"`
					} `json:"_mcptape"`
				}
			}
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out.Bytes())
		}
		want := map[string]int{}
		for _, s := range tape.Sessions {
			if !s.Info.IsHTTP() {
				continue
			}
			for _, m := range s.Messages {
				if m.HTTP != nil && m.HTTP.Stream != "ws" {
					want[s.Info.ID]++
				}
			}
		}
		got := map[string]int{}
		for _, e := range doc.Log.Entries {
			if e.Time < 0 {
				t.Errorf("entry time %v", e.Time)
			}
			if e.MCPTape.RequestSeq != 0 {
				got[e.Pageref]++
			}
			got[e.Pageref] += len(e.MCPTape.ResponseSeqs)
		}
		for id, n := range want {
			if got[id] != n {
				t.Errorf("session %s: %d messages in entries, want %d", id, got[id], n)
			}
		}
	})
}
