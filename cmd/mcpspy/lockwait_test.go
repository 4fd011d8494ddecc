package main

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// A command that meets a cassette another process holds says so once it
// has waited a second, rather than sit silent for up to LockTimeout, and
// goes on when the file is let go.
func TestMcpspy_SaysItWaitsForALockedCassette(t *testing.T) {
	bin := peertest.Binary(t, "mcpspy")
	db := peertest.CopyShipped(t, "everything-stdio.db")
	unlock := peertest.HoldLock(t, db)
	cmd := exec.Command(bin, "ls", db)
	var out strings.Builder
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stderr).ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		want := "mcpspy: waiting for " + db + ": another process holds its lock (waiting up to " + store.LockTimeout.String() + ")\n"
		if line != want {
			t.Errorf("stderr %q, want %q", line, want)
		}
	case <-time.After(store.LockTimeout):
		t.Fatal("nothing said while waiting for the lock")
	}
	unlock()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ls after the lock was let go: %v", err)
	}
	if !strings.Contains(out.String(), "s1\teverything\tstdio") {
		t.Errorf("ls printed %q", out.String())
	}
}
