package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// runOnPipe runs mcpspy with the path of a pipe holding b (as a shell's
// <(…) names it, /dev/fd/63) in place of "PIPE" among args.
func runOnPipe(t *testing.T, b []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path, done := peertest.PipePath(t, b)
	for i, a := range args {
		if a == "PIPE" {
			args[i] = path
		}
	}
	code, stdout, stderr = runCaptured(args...)
	done()
	return code, strings.ReplaceAll(stdout, path, "PIPE"), strings.ReplaceAll(stderr, path, "PIPE")
}

// mcpspy show <(mcpspy export x.db): the shell names the pipe /dev/fd/63,
// which says nothing of what it holds; show reads the export in it, and
// import takes it as it takes stdin.
func TestMcpspy_ProcessSubstitution(t *testing.T) {
	jsonl := readShipped(t, "everything-stdio.jsonl")
	_, want, _ := runCaptured("show", shippedCassette(t, "everything-stdio.jsonl"))
	if code, got, stderr := runOnPipe(t, jsonl, "show", "PIPE"); code != 0 || got != want || want == "" {
		t.Errorf("show: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, got, want)
	}
	out := filepath.Join(t.TempDir(), "x.db")
	if code, _, stderr := runOnPipe(t, jsonl, "import", "-o", out, "PIPE"); code != 0 || !strings.Contains(stderr, "from PIPE") {
		t.Fatalf("import: exit %d, stderr %q", code, stderr)
	}
	if _, got, _ := runCaptured("show", out); got != want {
		t.Errorf("show of the import:\n%s\nwant:\n%s", got, want)
	}
	if code, _, stderr := runOnPipe(t, readShipped(t, "everything-http.har"), "import", "-o", out, "PIPE"); code != 2 || !strings.Contains(stderr, "import: PIPE holds a HAR; save it to a FILE.har and import that") {
		t.Errorf("import of a HAR: exit %d, stderr %q", code, stderr)
	}
}
