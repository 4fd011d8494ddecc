package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordLongOperation records, through mcpspy, a go-sdk client that
// calls server-everything's trigger-long-running-operation (over stdio)
// with steps, asking for progress when withProgress, and returns the
// cassette. server-everything reports step i of steps as
// {"progress":i,"total":steps}, and only when asked.
func recordLongOperation(t *testing.T, name string, steps int, withProgress bool) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), name)
	argv := append([]string{peertest.Binary(t, "mcpspy"), "record", "-o", db, "--"}, peertest.ServerEverything(t, "stdio")...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "diff-progress", Version: "1.0.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 500 * time.Millisecond}, nil)
	if err != nil {
		t.Fatalf("connect through mcpspy: %v", err)
	}
	call := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.2, "steps": steps}}
	if withProgress {
		call.SetProgressToken("long-" + name)
	}
	if _, err := cs.CallTool(ctx, call); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// server-everything does not end when its stdin closes; the
	// transport then stops mcpspy with SIGTERM, on which it keeps what it
	// recorded and exits 143. Wait no longer for it than need be.
	if err := cs.Close(); err != nil {
		t.Logf("%s: close: %v", name, err)
	}
	return db
}

// Two recordings of server-everything's long operation, one of 3 steps
// and one of 5, set side by side with its steps and its answer's text
// left out: what differs is the progress the server reported, its last
// step by default, its every step with --progress steps. A recording of
// 3 steps whose client asked for no progress (the token is no part of
// the request compared) got none.
func TestMcpspy_DiffProgressRecorded(t *testing.T) {
	t.Parallel()
	three, five := recordLongOperation(t, "three.db", 3, true), recordLongOperation(t, "five.db", 5, true)
	unasked := recordLongOperation(t, "unasked.db", 3, false)
	call := regexp.QuoteMeta(`~ tools/call {"arguments":{"duration":0.2,"steps":3},"name":"trigger-long-running-operation"}`) + `  \(a#\d+ b#\d+\)\n`
	ignored := regexp.QuoteMeta(`~ tools/call {"arguments":{"duration":0.2,"steps":"(ignored)"},"name":"trigger-long-running-operation"}`) + `  \(a#\d+ b#\d+\)\n`
	const count = `\d+ the same, 1 answered differently, 0 only in a, 0 only in b\n$`
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"the last step", []string{"--ignore", "steps", "--ignore", "text", three, five},
			ignored + `    - progress.last.progress=3\n    - progress.last.total=3\n    \+ progress.last.progress=5\n    \+ progress.last.total=5\n` + count},
		{"every step", []string{"--progress", "steps", "--ignore", "steps", "--ignore", "text", three, five},
			ignored + `    - progress.count=3\n    - progress\[0\].total=3\n    - progress\[1\].total=3\n    - progress\[2\].total=3\n` +
				`    \+ progress.count=5\n    \+ progress\[0\].total=5\n    … 6 more \(--all-leaves shows them\)\n` + count},
		{"none asked for", []string{three, unasked},
			call + `    - progress.last.progress=3\n    - progress.last.total=3\n    \+ progress=\(none\)\n` + count},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCaptured(append([]string{"diff", "--exit-code"}, tt.args...)...)
			if code != 1 || !regexp.MustCompile(tt.want).MatchString(out) || stderr != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 and stdout matching:\n%s", code, stderr, out, tt.want)
			}
		})
	}
	// The same recording on both sides is the same, progress and all.
	if code, out, stderr := runCaptured("diff", "--exit-code", "--progress", "steps", three, three); code != 0 || stderr != "" {
		t.Errorf("a recording against itself: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
}
