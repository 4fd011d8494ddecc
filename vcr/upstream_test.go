package vcr_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/vcr"
)

// NewHTTPFunc starts a server on a port of its own (a go-sdk server on
// httptest's) only in the runs that reach it: the one that records, one
// that records again, and ReplayWithNew; a run that replays, in CI say,
// never starts it. NewHTTP needed its URL, and so the server running, in
// every run.
func TestNewHTTPFunc_StartsUpstreamOnlyToReach(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "lazy.db")
	started := 0
	var running *httptest.Server
	upstream := func(tb testing.TB) string {
		started++
		remote := mcp.NewServer(&mcp.Implementation{Name: "lazy", Version: "1.0.0"}, nil)
		mcp.AddTool(remote, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
		running = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remote }, nil))
		tb.Cleanup(running.Close)
		return running.URL + "/mcp"
	}
	tests := []struct {
		name      string
		env       string
		mode      vcr.Mode
		args      map[string]any
		recording bool
		started   int // how many times upstream has been called, after this run
		added     int // NewRequests
	}{
		{"the first run records", "", vcr.RecordOnce, map[string]any{"text": "one"}, true, 1, 0},
		{"the next replays", "", vcr.RecordOnce, map[string]any{"text": "one"}, false, 1, 0},
		{"CI replays", "replay", vcr.RecordOnce, map[string]any{"text": "one"}, false, 1, 0},
		{"recorded again", "record", vcr.RecordOnce, map[string]any{"text": "two"}, true, 2, 0},
		{"new episodes", "", vcr.ReplayWithNew, map[string]any{"text": "three"}, false, 3, 1},
		{"both replay", "replay", vcr.RecordOnce, map[string]any{"text": "three"}, false, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(vcr.EnvMode, tt.env)
			srv := vcr.NewHTTPFunc(t, path, upstream, vcr.WithMode(tt.mode))
			if srv.Recording() != tt.recording {
				t.Errorf("recording %v, want %v", srv.Recording(), tt.recording)
			}
			if started != tt.started {
				t.Errorf("the server was started %d times in all, want %d", started, tt.started)
			}
			if got := connectHost(t, srv, nil).call(t, "echo", tt.args); got != tt.args["text"] {
				t.Errorf("echo answered %q", got)
			}
			if n := srv.NewRequests(); n != tt.added {
				t.Errorf("%d new requests, want %d", n, tt.added)
			}
		})
		// Stopped by the cleanup upstream registered: the next run starts
		// its own, or none.
		if running != nil {
			if resp, err := http.Get(running.URL); err == nil {
				resp.Body.Close()
				t.Errorf("after %q the server still runs", tt.name)
			}
		}
	}
}
