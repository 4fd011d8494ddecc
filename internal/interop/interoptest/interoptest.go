// Package interoptest holds what the interop test packages share about
// the cassettes their peers record through mcpspy: waiting for the
// recorded sessions to end, and showing a cassette when a test fails. It
// is for tests only, and never records or serves anything itself.
package interoptest

import (
	"os/exec"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// WaitEnded polls the cassette at db until it holds n sessions, every one
// ended, and returns it. Over stdio a session ends after the client has
// exited: the SDKs' close waits up to 2 s for its server (here mcpspy)
// to exit, then signals it, and does not wait for the end of that.
func WaitEnded(t *testing.T, db string, n int) *store.Tape {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tape, err := store.Load(db)
		ended := 0
		if err == nil {
			for _, s := range tape.Sessions {
				if s.Info.End != nil {
					ended++
				}
			}
			if ended == n && len(tape.Sessions) == n {
				return tape
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cassette %s: want %d sessions ended within 20 s; have %d ended (load: %v)", db, n, ended, err)
		}
		time.Sleep(20 * time.Millisecond) // polling, with a deadline
	}
}

// LogOnFailure logs the cassette at db, one message a line, if the test
// fails.
func LogOnFailure(t *testing.T, db string) {
	t.Helper()
	spy := peertest.Binary(t, "mcpspy")
	t.Cleanup(func() {
		if t.Failed() {
			out, err := exec.Command(spy, "show", db).CombinedOutput()
			t.Logf("cassette %s (%v):\n%s", db, err, out)
		}
	})
}
