package mcphttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestSetStateless(t *testing.T) {
	tests := []struct {
		name, frame, method string
		want                http.Header
	}{
		{"tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "tools/call",
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}},
		{"resources/read", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "resources/read",
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a"}}},
		{"a name to encode", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"grüß","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "prompts/get",
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"prompts/get"}, "Mcp-Name": {"=?base64?Z3LDvMOf?="}}},
		{"handshake era", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, "tools/call", http.Header{}},
		{"a response", `{"jsonrpc":"2.0","id":1,"result":{}}`, "", http.Header{}},
		// Names match exactly, as JSON's do: encoding/json's struct fields
		// took "Name" for "name".
		{"a name in other case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "tools/call",
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64??="}}},
		{"a name that is no string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "tools/call", http.Header{}},
		{"a null name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "tools/call",
			http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64??="}}},
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, "tools/call", http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if applied := SetStateless(h, []byte(tt.frame), tt.method); applied != (len(tt.want) > 0) {
				t.Errorf("SetStateless says %v", applied)
			}
			if len(h) != len(tt.want) {
				t.Fatalf("got %v, want %v", h, tt.want)
			}
			for k, v := range tt.want {
				if h.Get(k) != v[0] {
					t.Errorf("%s: got %q, want %q", k, h.Get(k), v[0])
				}
			}
		})
	}
}

func TestSetSession(t *testing.T) {
	h := http.Header{}
	SetSession(h, http.Header{"Authorization": {"Bearer x"}}, "", "")
	if h.Get("Authorization") != "Bearer x" || h.Get("Mcp-Session-Id") != "" || h.Get("MCP-Protocol-Version") != "" {
		t.Errorf("before the session: %v", h)
	}
	SetSession(h, nil, "abc", "2025-11-25")
	if h.Get("Mcp-Session-Id") != "abc" || h.Get("MCP-Protocol-Version") != "2025-11-25" {
		t.Errorf("in the session: %v", h)
	}
}

// BenchmarkSetStateless_BigArguments: a 2026-07-28 tools/call with 16 MiB
// of arguments, as mcpmock's fallback and rerun send one upstream.
func BenchmarkSetStateless_BigArguments(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"` +
		strings.Repeat("A", 16<<20) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if !SetStateless(http.Header{}, frame, "tools/call") {
			b.Fatal("no headers set")
		}
	}
}
