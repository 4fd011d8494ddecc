package lint_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// In 2026-07-28 closing a request's response stream cancels it, and mcp-go
// v1.2.1's client cancels a tools/call that way when its context ends (it
// sends no notifications/cancelled). The recording keeps, on the request,
// that the client left (before the server's answer began, or partway
// through its event stream), and lint counts the call cancelled, not
// unanswered.
//
// go-sdk v1.8's stateless server cancels the call's handler only with
// PropagateRequestCancellation (off by default: listens only); the test
// sets it, and so sees mcpspy pass the cancellation on.
func TestRealPeers_CallCancelledByClosingItsStream(t *testing.T) {
	started := make(chan struct{}, 2)
	cancelled := make(chan struct{}, 2)
	srv := mcp.NewServer(&mcp.Implementation{Name: "lint-wait", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Reports progress once, then waits to be cancelled"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "waiting"})
			}
			started <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil, nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return nil, nil, errors.New("never cancelled")
			}
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "rec.db")
	t.Run("record", func(t *testing.T) {
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		tr, err := transport.NewStreamableHTTP(rec.URL(), transport.WithHTTPBasicClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		life, end := context.WithTimeout(context.Background(), 30*time.Second)
		defer end()
		c := mcpgoclient.NewClient(tr)
		if err := c.Start(life); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		progressed := make(chan struct{}, 1)
		c.OnNotification(func(n mcpgo.JSONRPCNotification) {
			if n.Method == "notifications/progress" {
				progressed <- struct{}{}
			}
		})
		init := mcpgo.InitializeRequest{}
		init.Params.ClientInfo = mcpgo.Implementation{Name: "lint-cancel", Version: "0.1.0"}
		ir, err := c.Initialize(life, init)
		if err != nil {
			t.Fatal(err)
		}
		if ir.ProtocolVersion != "2026-07-28" {
			t.Fatalf("mcp-go and go-sdk agreed on %s; the test is about 2026-07-28", ir.ProtocolVersion)
		}
		// callCancelled calls wait and cancels the call once signal comes.
		callCancelled := func(meta *mcpgo.Meta, signal <-chan struct{}) {
			t.Helper()
			ctx, cancel := context.WithCancel(life)
			go func() {
				select {
				case <-signal:
				case <-life.Done():
				}
				cancel()
			}()
			req := mcpgo.CallToolRequest{}
			req.Params.Name, req.Params.Meta = "wait", meta
			if _, err := c.CallTool(ctx, req); !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled call ended with %v", err)
			}
			select {
			case <-cancelled:
			case <-life.Done():
				t.Fatal("the server's handler was never cancelled")
			}
		}
		callCancelled(nil, started)                                  // before the answer began
		callCancelled(&mcpgo.Meta{ProgressToken: "tok"}, progressed) // partway through its stream
	})
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// What the test is about must be in the recording: two calls, never
	// answered, each noted as left by the client, and no
	// notifications/cancelled.
	var notes []string
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			switch sum := jsonrpc.Classify(m.Frame); sum.Method {
			case "notifications/cancelled":
				t.Fatalf("mcp-go sent %s; the test is about a client that closes the stream instead", m.Frame)
			case "tools/call":
				notes = append(notes, m.Note)
			}
		}
	}
	if want := []string{store.NoteLeftBeforeAnswer, store.NoteLeftStream}; !slices.Equal(notes, want) {
		t.Fatalf("the cancelled calls' notes: %q; want %q", notes, want)
	}
	for _, f := range lint.Tape(tape, lint.Options{}) {
		t.Errorf("%s", f)
	}
}
