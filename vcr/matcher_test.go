package vcr_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/vcr"
)

// sameButAt accepts a recorded tools/call whose arguments differ from the
// live one's at most in "at", a time the host stamps each call with.
func sameButAt(live, recorded replay.MatchRequest) bool {
	var l, r struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if json.Unmarshal(live.Params, &l) != nil || json.Unmarshal(recorded.Params, &r) != nil || l.Name != r.Name || len(l.Arguments) != len(r.Arguments) {
		return false
	}
	for k, v := range l.Arguments {
		if w, ok := r.Arguments[k]; !ok || (k != "at" && w != v) {
			return false
		}
	}
	return true
}

// A go-sdk client calls a go-sdk server's tool with a time that differs
// each run: recorded once, then answered from the cassette only thanks to
// WithMatcher, in ReplayWithNew without reaching the server (the fallback
// comes after the cassette's match), and in ReplayOnly; without the
// matcher the replay has no answer for it.
func TestWithMatcher_RealClient(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "stamp.db")
	var served atomic.Int64 // tools/call the real server answered
	remote := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	type stampIn struct {
		Text string `json:"text"`
		At   string `json:"at"`
	}
	mcp.AddTool(remote, &mcp.Tool{Name: "stamp", Description: "Echoes its text; at is when the host asked"},
		func(_ context.Context, _ *mcp.CallToolRequest, in stampIn) (*mcp.CallToolResult, any, error) {
			served.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stamped " + in.Text}}}, nil, nil
		})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remote }, nil))
	defer upstream.Close()
	call := func(at string) map[string]any { return map[string]any{"text": "hi", "at": at} }

	t.Run("recorded", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp")
		if got := connectHost(t, srv, nil).call(t, "stamp", call("2026-11-29T00:00:00Z")); got != "stamped hi" {
			t.Errorf("stamp answered %q", got)
		}
	})
	t.Run("new episodes: the cassette answers", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", vcr.WithMode(vcr.ReplayWithNew), vcr.WithMatcher(sameButAt))
		if got := connectHost(t, srv, nil).call(t, "stamp", call("2026-11-29T01:00:00Z")); got != "stamped hi" {
			t.Errorf("stamp replayed %q", got)
		}
		if n := srv.NewRequests(); n != 0 {
			t.Errorf("%d requests went to the server, want none", n)
		}
		srv.AssertAllUsed()
	})
	if n := served.Load(); n != 1 {
		t.Errorf("the server answered %d calls, want 1 (the recording's)", n)
	}
	upstream.Close()
	t.Run("replayed", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", vcr.WithMode(vcr.ReplayOnly), vcr.WithMatcher(sameButAt))
		h := connectHost(t, srv, nil)
		if got := h.call(t, "stamp", call("2026-11-29T02:00:00Z")); got != "stamped hi" {
			t.Errorf("stamp replayed %q", got)
		}
		// Another text is another call: the matcher does not take it.
		if _, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "stamp", Arguments: map[string]any{"text": "bye", "at": "x"}}); err == nil {
			t.Error("a call with other text was answered")
		}
	})
	t.Run("replayed without the matcher", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", vcr.WithMode(vcr.ReplayOnly))
		h := connectHost(t, srv, nil)
		_, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "stamp", Arguments: call("2026-11-29T03:00:00Z")})
		if err == nil || !strings.Contains(err.Error(), "no recorded answer for tools/call") {
			t.Errorf("without the matcher: %v, want the replay's unmatched error", err)
		}
	})
}
