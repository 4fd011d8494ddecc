package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// A new build of a server that writes a log line to stdout, before its
// messages: real clients choke on it, though every answer is the same.
// rerun names the line and, with --exit-code, exits 1. A recording that
// has the line already (the server always wrote it) tells nothing new.
func TestMcpspy_RerunNamesWhatIsNoMessage(t *testing.T) {
	t.Parallel()
	banner := append([]string{"sh", "-c", `echo 'starting server v2'; exec "$@"`, "sh"}, peertest.ServerEverything(t, "stdio")...)
	again := filepath.Join(t.TempDir(), "again.db")
	code, stdout, stderr := runCaptured(append([]string{"rerun", "--exit-code", "-o", again, shippedCassette(t, "everything-stdio.db"), "--"}, banner...)...)
	// The line's seq is where the rerun read it: before or after it
	// had sent initialize.
	want := regexp.MustCompile(`\n7 the same, 0 answered differently, 0 only in a, 0 only in b\n` +
		`! the server sent what is no JSON-RPC message: seq [12]: invalid JSON: "starting server v2"\n$`)
	if code != 1 || !want.MatchString(stdout) {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and stdout ending:\n%s", code, stdout, stderr, want)
	}

	code, stdout, stderr = runCaptured(append([]string{"rerun", "--exit-code", again, "--"}, banner...)...)
	if code != 0 || strings.Contains(stdout, "! ") {
		t.Errorf("the recording with the line, rerun: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0 and nothing named", code, stdout, stderr)
	}
}
