package lint

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// A server request mcpmock's fallback answered itself, its client not
// asked (store.NoteNotAsked on the answer), is answered, by mcpmock: the
// pair is no finding, and nothing of the answer is held against the
// client. It echoes a bad id of the server's, as it must: the server's
// request has the finding. A server that refuses the POST of it is
// reported, naming whose answer it refused and quoting the body after
// the note.
func TestSession_NotAsked(t *testing.T) {
	refusal := func(id string) []string {
		return opened(
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`< {"jsonrpc":"2.0","id":`+id+`,"method":"roots/list"}`,
			`> {"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"mcpmock: not asked of the client: nothing it sent caused this roots/list"}}`,
		)
	}
	versioned := func(*store.Message) http.Header { return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}} }
	streams := func(m *store.Message) (string, http.Header) {
		if m.Seq == 6 { // the server's request, on the GET stream
			return store.StreamGetSSE, http.Header{"Content-Type": {"text/event-stream"}}
		}
		return store.StreamPostSSE, http.Header{"Content-Type": {"text/event-stream"}}
	}
	tests := []struct {
		name     string
		lines    []string
		http     bool
		status   int    // of the answer's POST (seq 7)
		note     string // on the answer
		want     []string
		wantText string
	}{
		{name: "refused, as the fallback does", lines: refusal(`0`), note: store.NoteNotAsked},
		{name: "over HTTP, accepted", lines: refusal(`0`), http: true, status: 202, note: store.NoteNotAsked},
		{name: "a fractional id of the server's", lines: refusal(`1.5`), note: store.NoteNotAsked, want: []string{"id-not-integer@6"}},
		{name: "a fractional id, echoed by the client", lines: refusal(`1.5`), want: []string{"id-not-integer@6", "id-not-integer@7"}},
		{name: "its POST refused", lines: refusal(`0`), http: true, status: 503, note: store.NoteNotAsked + "; refused without a message: busy",
			want:     []string{"http-status@7"},
			wantText: "the POST of mcpmock's own answer to the server's roots/list 0 (its client was not asked it) was answered 503 Service Unavailable, with no JSON-RPC answer; its body answers no request: busy"},
		{name: "the client's answer's POST refused", lines: refusal(`0`), http: true, status: 503, note: "refused without a message: busy",
			want:     []string{"http-status@7"},
			wantText: "the POST was answered 503 Service Unavailable, with no JSON-RPC answer; its body answers no request: busy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := session(tt.lines...)
			if tt.http {
				withHTTP(s, versioned, streams)
				s.Messages[6].HTTP.Status = tt.status
			}
			s.Messages[6].Note = tt.note
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
