package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestMcpspy_RerunAllLeaves: rerun cuts an answer that differs in many
// leaves at six, as diff does, and names the flag that shows the rest;
// --all-leaves shows every one. The recording is the shipped one with
// every tool's title edited in its tools/list answer, rerun against
// server-everything.
func TestMcpspy_RerunAllLeaves(t *testing.T) {
	t.Parallel()
	everything := peertest.ServerEverything(t, "stdio")
	plain, _ := runText(t, "export", shippedCassette(t, "everything-stdio.db"))
	lines := strings.Split(string(plain), "\n")
	titles := 0
	for i, l := range lines {
		if strings.Contains(l, `"result":{"tools":[`) {
			titles = strings.Count(l, `"title":"`)
			lines[i] = strings.ReplaceAll(l, `"title":"`, `"title":"Old `)
		}
	}
	if titles <= 6 {
		t.Fatalf("the shipped tools/list answer has %d titles; the test needs more than six", titles)
	}
	edited := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(edited, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	removed := func(stdout string) int { return strings.Count(stdout, "\n    - result.tools[") }

	code, stdout, stderr := runCaptured(append([]string{"rerun", "--exit-code", edited, "--"}, everything...)...)
	if code != 1 || removed(stdout) != 6 || !strings.Contains(stdout, " more (--all-leaves shows them)\n") {
		t.Errorf("exit %d, %d leaves shown, stdout:\n%s\nstderr:\n%s\nwant exit 1, six leaves and the flag named", code, removed(stdout), stdout, stderr)
	}
	code, stdout, stderr = runCaptured(append([]string{"rerun", "--exit-code", "--all-leaves", edited, "--"}, everything...)...)
	if code != 1 || removed(stdout) != titles || strings.Contains(stdout, " more (") {
		t.Errorf("--all-leaves: exit %d, %d leaves shown, stdout:\n%s\nstderr:\n%s\nwant exit 1 and all %d", code, removed(stdout), stdout, stderr, titles)
	}
}
