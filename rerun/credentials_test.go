package rerun_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// basicOnly lets through only requests with the Basic credentials
// user:s3cret (or, with bearer set, that bearer token); others get a 401,
// as a server behind an auth check answers.
func basicOnly(h http.Handler, bearer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if bearer != "" {
			ok = r.Header.Get("Authorization") == "Bearer "+bearer
		} else {
			ok = ok && user == "user" && pass == "s3cret"
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A server URL with user info (http://user:password@host/mcp, ws://…)
// reaches a server behind an auth check with those credentials, as
// mcpspy record sends them: a Basic Authorization header, over every
// transport (the WebSocket dialer refuses a URL with user info outright).
// An Authorization given in Header wins. The rerun's session names the
// upstream without the password.
func TestRun_SendsURLUserInfo(t *testing.T) {
	newServer := func(*http.Request) *mcp.Server { return gosdk.NewServer("auth-go") }
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	for _, tt := range []struct {
		name    string
		handler http.Handler
		scheme  string
		path    string
		bearer  string // the Authorization Header gives, and the server wants
	}{
		{"streamable HTTP", mcp.NewStreamableHTTPHandler(newServer, nil), "http", "/mcp", ""},
		{"legacy HTTP+SSE", mcp.NewSSEHandler(newServer, nil), "http", "/sse", ""},
		{"WebSocket", gosdk.WebSocketHandler(newServer(nil), nil), "ws", "/mcp", ""},
		{"streamable HTTP, Header's Authorization wins", mcp.NewStreamableHTTPHandler(newServer, nil), "http", "/mcp", "tok"},
		{"WebSocket, Header's Authorization wins", gosdk.WebSocketHandler(newServer(nil), nil), "ws", "/mcp", "tok"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(basicOnly(tt.handler, tt.bearer))
			defer ts.Close()
			u, err := url.Parse(tt.scheme + "://user:s3cret@" + strings.TrimPrefix(ts.URL, "http://") + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			opts := rerun.Options{URL: u}
			if tt.bearer != "" {
				opts.Header = http.Header{"Authorization": {"Bearer " + tt.bearer}}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := rerun.Run(ctx, recorded, opts)
			if err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if len(res.Unanswered) > 0 || count(&res.Session, store.S2C, "") < 2 {
				t.Fatalf("unanswered %q; session %v", res.Unanswered, res.Session.Messages)
			}
			if u.User == nil {
				t.Error("Run changed the caller's URL")
			}
			if up := res.Session.Info.Upstream; strings.Contains(up, "s3cret") || !strings.Contains(up, "user") {
				t.Errorf("upstream %q: want the user, not the password", up)
			}
		})
	}
}
