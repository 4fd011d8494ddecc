package recorder

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/sse"
)

// The legacy endpoint event: a relative URI passes as it came, an absolute
// one on the upstream (host compared without case, scheme with) is
// rewritten to the proxy keeping its escaped path and query, and one that
// points elsewhere is neither rewritten nor claimed as this session's.
// Only the data value changes: id, event and CRLF line ends stay.
func TestLegacyEndpoint(t *testing.T) {
	upstream, err := url.Parse("http://upstream.example:3001/sse")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		raw           string
		wantKey       string
		wantRewritten string // "" when the event passes unchanged
	}{
		{"relative",
			"event: endpoint\ndata: /message?sessionId=abc\n\n",
			"/message?sessionId=abc", ""},
		{"absolute on the upstream",
			"id: 7\r\nevent: endpoint\r\ndata: http://upstream.example:3001/message?sid=1\r\n\r\n",
			"/message?sid=1",
			"id: 7\r\nevent: endpoint\r\ndata: http://127.0.0.1:8080/message?sid=1\r\n\r\n"},
		{"host in another case",
			"event: endpoint\ndata: http://UPSTREAM.example:3001/message?sid=2\n\n",
			"/message?sid=2",
			"event: endpoint\ndata: http://127.0.0.1:8080/message?sid=2\n\n"},
		{"escaped path kept",
			"event: endpoint\ndata: http://upstream.example:3001/a%2Fb/message?sid=3\n\n",
			"/a%2Fb/message?sid=3",
			"event: endpoint\ndata: http://127.0.0.1:8080/a%2Fb/message?sid=3\n\n"},
		{"fragment kept",
			"event: endpoint\ndata: http://upstream.example:3001/message?sid=7#frag%20ment\n\n",
			"/message?sid=7",
			"event: endpoint\ndata: http://127.0.0.1:8080/message?sid=7#frag%20ment\n\n"},
		{"another scheme on the same host",
			"event: endpoint\ndata: https://upstream.example:3001/message?sid=4\n\n",
			"", ""},
		{"another host",
			"event: endpoint\ndata: http://elsewhere.example/message?sid=5\n\n",
			"", ""},
		{"over two data lines",
			"event: endpoint\ndata: http://upstream.example:3001/message?sid=6#a\ndata: b\n\n",
			"/message?sid=6", ""},
		{"not a URI",
			"event: endpoint\ndata: http://[::1\n\n",
			"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := sse.NewReader(strings.NewReader(tt.raw), 1<<20).Next()
			if err != nil {
				t.Fatalf("parse %q: %v", tt.raw, err)
			}
			r := httptest.NewRequest("GET", "http://127.0.0.1:8080/sse", nil)
			x := &exchange{p: &HTTPProxy{Upstream: upstream}, r: r, target: upstream}
			key, rewritten := x.legacyEndpoint(ev)
			if key != tt.wantKey {
				t.Errorf("key %q, want %q", key, tt.wantKey)
			}
			if string(rewritten) != tt.wantRewritten {
				t.Errorf("rewritten %q, want %q", rewritten, tt.wantRewritten)
			}
		})
	}
}
