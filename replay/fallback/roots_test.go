package fallback_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/internal/syncbuf"
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

// A server request the fallback's server makes while no request of the
// live client's is being answered (server-everything asks for roots
// 350 ms after initialized) is not the client's to answer when its
// session began with mcpmock's own handshake: the client did not cause
// it, and had its own handshake answered from the recording. The server
// gets an error instead (server-everything then asks again during the
// next call that needs the roots), and stderr says so. After the client
// said its roots changed, the server's asking again is passed on.
// go-sdk's server over Streamable HTTP, asked by the test, stands in for
// server-everything's timer, so that nothing depends on timing.
func TestFallback_UnpromptedServerRequestNotAsked(t *testing.T) {
	sessions := make(chan *mcp.ServerSession, 1)
	changed := make(chan struct{}, 1)
	srv := gosdk.NewServer("gosdk")
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", InputSchema: &jsonschema.Schema{Type: "object"}}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		sessions <- req.Session
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/roots/list_changed"`)) {
				defer func() { changed <- struct{}{} }() // once the server has it
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer real.Close()
	u, _ := url.Parse(real.URL)
	var log syncbuf.Buffer
	fb := newFallback(t, fallback.Options{URL: u, Log: &log})
	mock := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, cassetteDB(t, "gosdk.db", gosdkCassette)), fb})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asked := make(chan string, 10)
	sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	sdk.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				asked <- method
			}
			return next(ctx, method, req)
		}
	})
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/a", Name: "a"})
	cs, err := sdk.Connect(ctx, mock.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A call the cassette cannot answer starts the server, with
	// mcpmock's handshake; once it is answered, nothing is in flight.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	ss := <-sessions
	//lint:ignore SA1019 handshake-era servers still ask for roots
	if _, err := ss.ListRoots(ctx, nil); err == nil || !strings.Contains(err.Error(), "not asked of the client") {
		t.Errorf("the server's roots/list: %v; want mcpmock's error", err)
	}
	if len(asked) > 0 {
		t.Errorf("the client was asked for its roots")
	}
	if !strings.Contains(log.String(), "roots/list, which "+fb.Target()+" sent while no request of the client's was being answered, is not asked of the client") {
		t.Errorf("stderr: %q", log.String())
	}

	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/b", Name: "b"})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the client's notifications/roots/list_changed never reached the server")
	}
	//lint:ignore SA1019 handshake-era servers still ask for roots
	roots, err := ss.ListRoots(ctx, nil)
	if err != nil || len(roots.Roots) != 2 || len(asked) != 1 {
		t.Errorf("the server's roots/list after the client's change: %+v, %v, the client asked %d times; want its two roots, asked once", roots, err, len(asked))
	}
}
