package mocktest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The cassettes the project ships, recorded from server-everything by the
// TypeScript SDK over stdio and over Streamable HTTP, replay to a go-sdk
// client on stdio and on HTTP: another SDK, another transport, and for a
// go-sdk v1.8 client another protocol era (it probes server/discover first
// and falls back to initialize).
func TestShippedCassettes(t *testing.T) {
	for _, name := range []string{"everything-stdio.db", "everything-stdio.jsonl", "everything-http.db", "everything-http.jsonl", "everything-http.har"} {
		for _, overHTTP := range []bool{false, true} {
			t.Run(name+map[bool]string{false: " on stdio", true: " on HTTP"}[overHTTP], func(t *testing.T) {
				srv := mocktest.NewFromCassette(t, filepath.Join("..", "..", "cassettes", name))
				var tr mcp.Transport = srv.Transport()
				if overHTTP {
					tr = &mcp.StreamableClientTransport{Endpoint: srv.URL()}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ServerInfo.Name; got != "mcp-servers/everything" {
					t.Errorf("server name %q", got)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from mcptape"}})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hello from mcptape" {
					t.Errorf("echo answered %q", got)
				}
			})
		}
	}
}

// replay.Ignore through mocktest.LoadCassette: a go-sdk client whose echo
// message changes from run to run still gets the recorded answer.
func TestLoadCassette_Ignore(t *testing.T) {
	c := mocktest.LoadCassette(t, filepath.Join("..", "..", "cassettes", "everything-stdio.db"), replay.Ignore("message"))
	srv := mocktest.New(t, []replay.Source{c})
	res, err := callEcho(t, srv, "made up at "+time.Now().String())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hello from mcptape" {
		t.Errorf("echo answered %q, want the recorded answer", got)
	}
	if r := srv.Report(); len(r.Unmatched) > 0 {
		t.Errorf("unmatched: %+v", r.Unmatched)
	}
}

// A tool that asks the user first (cassettes/script-elicit.yaml) is called
// once, as ToolCalls counts, whichever era the host speaks: a 2026-07-28
// host sends the call twice on the wire (the retry carries the user's
// answer), a handshake-era one once.
func TestToolCalls_OneCallInEitherEra(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+version, func(t *testing.T) {
			srv := mocktest.New(t, mocktest.Load(t, filepath.Join(peertest.ModuleRoot(), "cassettes", "script-elicit.yaml")))
			c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "note": "n"}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, srv.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"service": "api"}}); err != nil {
				t.Fatal(err)
			}
			sent := 0
			for _, r := range srv.Received() {
				if r.Method == "tools/call" {
					sent++
				}
			}
			wantSent := map[string]int{"2025-11-25": 1, "": 2}[version]
			if calls := srv.ToolCalls("deploy"); len(calls) != 1 || string(calls[0]) != `{"service":"api"}` || sent != wantSent {
				t.Errorf("ToolCalls(deploy) = %s, tools/call sent %d times; want one call, sent %d times", calls, sent, wantSent)
			}
		})
	}
}

// URL and WebSocketURL start their server once: every call gives the
// same URL, as httptest.Server's URL does, and a host connected to the
// first is still talking to the one the test reads.
func TestServer_URLIsOneServer(t *testing.T) {
	srv := mocktest.NewFromCassette(t, filepath.Join("..", "..", "cassettes", "everything-stdio.db"))
	if a, b := srv.URL(), srv.URL(); a != b {
		t.Errorf("URL() gave %s, then %s: want one server", a, b)
	}
	if a, b := srv.WebSocketURL(), srv.WebSocketURL(); a != b {
		t.Errorf("WebSocketURL() gave %s, then %s: want one server", a, b)
	}
	if srv.URL() == srv.WebSocketURL() {
		t.Error("URL and WebSocketURL are one address; want a server each")
	}
}
