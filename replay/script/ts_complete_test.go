package script_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestTSClient_Complete: the TypeScript SDK 1.32.2 client's
// client.complete (testdata/complete-client.mjs, with strict
// capabilities, so it asks only a server that declares completions)
// against the mcpmock binary serving script-complete.yaml, over stdio and
// Streamable HTTP: by prefix, an explicit answer with total and hasMore,
// by context, a template variable (named by the uriTemplate the client
// listed), an answer's error, and -32602 for an argument the prompt lacks.
func TestTSClient_Complete(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-complete.yaml")
	code, err := os.ReadFile(filepath.Join("testdata", "complete-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"capabilities":{"completions":{},"prompts":{"listChanged":false},"resources":{"listChanged":false}},
		"prefix":{"values":["Gujarati"],"total":1},
		"explicit":{"values":["English","French"],"total":7000,"hasMore":true},
		"context":{"values":["Belgian","Canadian","Swiss"],"total":3},
		"template":{"values":["2026-11-27","2026-11-28"],"total":2},
		"error":{"code":-32602,"message":"MCP error -32602: no logs before 2000 (1999)"},
		"unknownArgument":{"code":-32602,"message":"MCP error -32602: completion/complete: prompt \"translate\" has no argument \"tone\" (it has: language, dialect, text)"}}`
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			args := []string{"stdio", mock, "serve", script}
			if transport == "http" {
				args = []string{"--url", serveHTTP(t, mock, script)}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// --eval from testdata/npm: the script lives with this
			// package's tests, and its imports resolve from the working
			// directory.
			cmd := exec.CommandContext(ctx, peertest.Node(t), append([]string{"--input-type=module", "--eval", string(code), "--"}, args...)...)
			cmd.Dir = peertest.NPMDir(t)
			checkTSClient(t, cmd, want)
		})
	}
}
