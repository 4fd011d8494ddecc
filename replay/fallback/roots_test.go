package fallback_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// A client's notifications/roots/list_changed reaches the server the
// fallback started (go-sdk's, over Streamable HTTP), so that a server
// that asks for the roots again sees the client's new ones.
func TestFallback_PassesRootsChanged(t *testing.T) {
	seen := make(chan struct{}, 1)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, nil)
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/roots/list_changed"`)) {
				select {
				case seen <- struct{}{}:
				default:
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer real.Close()
	u, _ := url.Parse(real.URL)
	db := cassetteDB(t, "gosdk.db", gosdkCassette)
	fb := newFallback(t, fallback.Options{URL: u, Record: db})
	srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/a", Name: "a"})
	cs, err := sdk.Connect(ctx, srv.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A call the cassette cannot answer starts the server.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/b", Name: "b"})
	select {
	case <-seen:
	case <-time.After(15 * time.Second):
		t.Fatal("the client's notifications/roots/list_changed never reached the server")
	}
}
