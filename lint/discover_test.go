package lint

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// A 2026-07-28 client asks a server which era it speaks with
// server/discover; a handshake-era server refuses it (server-everything:
// 400 and a JSON-RPC error with a null id), and the client falls back to
// initialize. That refusal is no finding; other refusals of it are, and
// say what came instead of an answer.
func TestSession_DiscoverRefused(t *testing.T) {
	const body = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`
	tests := []struct {
		name     string
		method   string
		status   int
		note     string
		want     []string
		wantText string
	}{
		{name: "400 with a body", method: "server/discover", status: 400, note: "refused without a message: " + body},
		{name: "404 without a body", method: "server/discover", status: 404},
		{name: "a 5xx", method: "server/discover", status: 500, note: "refused without a message: " + body, want: []string{"http-status@1"},
			wantText: "the POST of server/discover was answered 500 Internal Server Error, with no JSON-RPC answer; its body answers no request: " + body},
		{name: "refused by mcpspy", method: "server/discover", status: 421, note: "answered by mcpspy, not the upstream: misdirected", want: []string{"http-status@1"},
			wantText: "the POST of server/discover was answered 421 Misdirected Request, with no JSON-RPC answer (answered by mcpspy, not the upstream: misdirected)"},
		{name: "another request", method: "tools/list", status: 400, note: "refused without a message: " + body, want: []string{"http-status@1"},
			wantText: "the POST of tools/list was answered 400 Bad Request, with no JSON-RPC answer; its body answers no request: " + body},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := withHTTP(session(
				`> {"jsonrpc":"2.0","id":1,"method":"`+tt.method+`","params":{"_meta":`+stateless(``)+`}}`,
				`< `+body,
			), func(*store.Message) http.Header {
				return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {tt.method}}
			}, func(*store.Message) (string, http.Header) {
				return "json", http.Header{"Content-Type": {"application/json"}}
			})
			s.Messages[0].HTTP.Status, s.Messages[0].Note = tt.status, tt.note
			s.Messages[1].HTTP.Status = tt.status
			findings := Session(s, Options{})
			if got := found(findings); !slices.Equal(got, tt.want) {
				t.Fatalf("findings %q, want %q", got, tt.want)
			}
			if tt.wantText != "" && findings[0].Message != tt.wantText {
				t.Errorf("message %q\nwant    %q", findings[0].Message, tt.wantText)
			}
		})
	}
}
