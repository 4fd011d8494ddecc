package script_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestTSv2Client: the TypeScript SDK v2 client (@modelcontextprotocol/client,
// testdata/npm/v2-client.mjs) pages through script-basic.yaml's tools and
// calls one, in each of its negotiation modes, over stdio and Streamable
// HTTP. In the 2026-07-28 era (auto, pin) it validates every result against
// that schema, which makes ttlMs and cacheScope required on the answers of
// server/discover and the lists: without them it refuses the answer.
func TestTSv2Client(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-basic.yaml")
	for _, transport := range []string{"stdio", "http"} {
		for _, mode := range []string{"legacy", "auto", "pin"} {
			t.Run(transport+"/"+mode, func(t *testing.T) {
				t.Parallel()
				args := []string{"greet", `{"name":"Ada"}`, "--", mock, "serve", script}
				if transport == "http" {
					args = []string{"greet", `{"name":"Ada"}`, "--url", serveHTTP(t, mock, script)}
				}
				version := "2026-07-28"
				if mode == "legacy" {
					version = "2025-11-25"
				}
				got := peertest.NodeTranscript(t, 60*time.Second, []string{"MODE=" + mode}, "v2-client.mjs", args...)
				want := []string{
					"version " + version,
					// The SDK pages by itself: pageSize 2 is three pages.
					"tools greet,weather,picture,add,shout",
					"call greet: Hello, Ada! (call 1)",
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("v2 client saw (-want +got):\n%s", d)
				}
			})
		}
	}
}
