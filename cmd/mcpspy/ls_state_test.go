package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// ls tells a session still being recorded from one whose recorder died
// without recording its end: a real mcpspy record lists as recording
// while it runs, and as having no end recorded once it is killed with
// SIGKILL, which no process can catch to record the end. It listed as
// recording for ever.
func TestMcpspy_LsRecordingOrKilled(t *testing.T) {
	db := filepath.Join(t.TempDir(), "killed.db")
	spy := exec.Command(peertest.Binary(t, "mcpspy"), "record", "-o", db, "--", "cat")
	client, err := spy.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = spy.Process.Kill()
			_ = spy.Wait()
		}
	})
	if _, err := io.WriteString(client, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waitMessages(t, db, 2) // the ping and cat's echo of it

	state := func() string {
		t.Helper()
		code, out, stderr := runCaptured("ls", db)
		fields := strings.Split(strings.TrimSuffix(out, "\n"), "\t")
		if code != 0 || strings.Count(out, "\n") != 1 || len(fields) != 9 {
			t.Fatalf("ls: exit %d, stdout %q, stderr %q; want one session's line", code, out, stderr)
		}
		return fields[7]
	}
	if got := state(); got != store.StateRecording {
		t.Errorf("while mcpspy records, ls says %q, want %q", got, store.StateRecording)
	}
	if err := spy.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = spy.Wait() // killed: the error says so
	waited = true
	if got := state(); got != store.StateNoEnd {
		t.Errorf("after mcpspy was killed, ls says %q, want %q", got, store.StateNoEnd)
	}
	if code, out, _ := runCaptured("ls", "--json", db); code != 0 || !strings.Contains(out, `"state":"`+store.StateNoEnd+`"`) {
		t.Errorf("after mcpspy was killed, ls --json: exit %d, %s; want the state %q", code, out, store.StateNoEnd)
	}
}
