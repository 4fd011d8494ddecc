package fallback_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// TestFallback_URLUserInfo: a fallback URL with user info
// (ws://user:password@host/mcp, http://…) reaches a go-sdk server behind
// a Basic auth check, as mcpspy record sends such credentials; over
// WebSocket, the dialer refuses a URL with user info outright. The
// recorded session names the upstream without the password.
func TestFallback_URLUserInfo(t *testing.T) {
	newServer := func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }
	for _, tt := range []struct {
		name, scheme string
		handler      http.Handler
	}{
		{"streamable HTTP", "http", mcp.NewStreamableHTTPHandler(newServer, nil)},
		{"WebSocket", "ws", gosdk.WebSocketHandler(newServer(nil), nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "s3cret" {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				tt.handler.ServeHTTP(w, r)
			}))
			defer real.Close()
			u, err := url.Parse(tt.scheme + "://user:s3cret@" + strings.TrimPrefix(real.URL, "http://") + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			db := cassetteDB(t, "gosdk.db", gosdkCassette)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			fb := newFallback(t, fallback.Options{URL: u, Record: db})
			srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
			c := connect(ctx, t, srv.Transport())
			if got := c.call(ctx, t, "add", map[string]any{"a": 20, "b": 22}, nil); got != `{"sum":42}` {
				t.Errorf("add answered %q", got)
			}
			c.cs.Close()
			srv.Close()
			if err := fb.Close(); err != nil {
				t.Fatal(err)
			}
			all := sessions(t, db)
			if up := all[len(all)-1].Info.Upstream; len(all) != 2 || strings.Contains(up, "s3cret") || !strings.Contains(up, "user") {
				t.Errorf("%d sessions, the new one's upstream %q: want the user, not the password", len(all), up)
			}
		})
	}
}
