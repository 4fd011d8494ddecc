package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMcpspy_LsVersionPerConnection: go-sdk's client, recorded through
// the mcpspy binary with a new connection for every POST, so that each
// request is a session of its own. Against a server without sessions
// (2026-07-28), a connection that carried only a tools/call still shows
// the version its request's _meta names. Against a server with sessions,
// which answers server/discover without 2026-07-28, the probe's
// connection shows no version: the client asked for one the server did
// not take.
func TestMcpspy_LsVersionPerConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		stateless bool
		// want is the version ls shows for a session by its first
		// client request's method.
		want map[string]string
	}{
		{"stateless", true, map[string]string{"server/discover": "2026-07-28", "tools/call": "2026-07-28", "tools/list": "2026-07-28"}},
		{"with sessions", false, map[string]string{"server/discover": "-", "initialize": "2025-11-25"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := gosdk.NewServer("upstream-go")
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
				&mcp.StreamableHTTPOptions{Stateless: tt.stateless}))
			t.Cleanup(up.Close)
			db := filepath.Join(t.TempDir(), "c.db")
			sp := startSpy(t, "-o", db, "--upstream", up.URL+"/mcp")

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			transport := &mcp.StreamableClientTransport{Endpoint: sp.url + "/mcp",
				HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
			cs, err := client.Connect(ctx, transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
				t.Fatal(err)
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if err := sp.stop(t); err != nil {
				t.Fatalf("mcpspy: %v\n%s", err, sp.stderr)
			}

			opening := map[string]string{} // session id → its first client request's method
			for _, s := range readTape(t, db).Sessions {
				for _, m := range s.Messages {
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					if m.Dir == store.C2S && json.Unmarshal(m.Frame, &req) == nil && req.ID != nil && req.Method != "" {
						opening[s.Info.ID] = req.Method
						break
					}
				}
			}
			code, out, stderr := runCaptured("ls", db)
			if code != 0 {
				t.Fatalf("ls: %d %s", code, stderr)
			}
			seen := map[string]bool{}
			for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
				f := strings.Split(line, "\t")
				if len(f) < 7 {
					t.Fatalf("ls line %q has %d fields", line, len(f))
				}
				method := opening[f[0]]
				want, ok := tt.want[method]
				if !ok {
					continue
				}
				seen[method] = true
				if f[6] != want {
					t.Errorf("session %s, opened by %s: ls shows version %q, want %q\n%s", f[0], method, f[6], want, out)
				}
			}
			for method := range tt.want {
				if !seen[method] {
					t.Errorf("no session opened by %s:\n%s", method, out)
				}
			}
		})
	}
}
