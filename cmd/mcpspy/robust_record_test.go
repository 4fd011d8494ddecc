package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// A foreign process (a backup tool, a bbolt CLI) holds the cassette's lock
// as a stdio session ends, and lets go while mcpspy's final commit still
// retries. Everything is recorded, so the run is no failure: mcpspy exits
// with the server's code. It once ended the session with a commit of its
// own, which failed after LockTimeout, and reported that failure (exit 1,
// "cassette is locked") even though the retried final commit then stored
// the session whole.
func TestMcpspy_RecordStdioLockClearsDuringFinalCommit(t *testing.T) {
	old := store.LockTimeout
	store.LockTimeout = 500 * time.Millisecond
	t.Cleanup(func() { store.LockTimeout = old })

	db := filepath.Join(t.TempDir(), "locked.db")
	if err := store.Init(db); err != nil {
		t.Fatal(err)
	}
	in, client := io.Pipe()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		err := run(context.Background(), []string{"record", "-o", db, "--", "sh", "-c", "cat; exit 7"},
			streams{In: in, Out: &out, Err: &errb})
		done <- cli.ExitCode("mcpspy", err, &errb)
	}()
	if _, err := io.WriteString(client, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waitMessages(t, db, 1)

	// Held across the session's end for longer than one lock wait, and
	// less than the final commit's three.
	unlock := peertest.HoldLock(t, db)
	client.Close()
	time.AfterFunc(5*store.LockTimeout/2, unlock)

	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("mcpspy record did not end")
	}
	if code != 7 {
		t.Errorf("exit %d, want the server's 7; stderr:\n%s", code, errb.String())
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(tape.Sessions))
	}
	s := tape.Sessions[0]
	if end := s.Info.End; end == nil || end.ExitCode == nil || *end.ExitCode != 7 {
		t.Errorf("session end %+v, want exit 7 recorded", end)
	}
	if len(s.Messages) != 2 { // the ping and cat's echo of it
		t.Errorf("%d messages recorded, want 2", len(s.Messages))
	}
}

// waitMessages polls the cassette at db until it holds n messages.
func waitMessages(t *testing.T, db string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tape, err := store.Load(db)
		got := 0
		if err == nil {
			for _, s := range tape.Sessions {
				got += len(s.Messages)
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages in %s after 20 s, want %d (last error %v)", got, db, n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
