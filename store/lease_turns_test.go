package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncbuf"
)

// Six recorders storing 4 MiB frames into one cassette take turns: none is
// passed over by more turns of the others, while it waits for the file,
// than a line of six allows. A writer that let the file go to a waiter
// used to take it back at its next commit, before the waiters (trying
// every millisecond) saw it free: here the most passed over of the six
// was passed 14 to 27 times, and with real processes one waited out
// LockTimeout.
func TestLease_WritersTakeTurns(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("waiters keep their place in line with open-file-description locks, which only Linux has")
	}
	// Counts, not times: no waiter is passed over for seeming stopped, and
	// none waits out its place in line, however slow the machine.
	setLease(t, leaseIdle, maxLeaseHold, time.Hour)
	setStoppedWaiter(t, time.Hour)

	const writers = 6
	frames := 40
	if raceEnabled {
		frames = 6 // the race detector's memory copies take a minute for 40
	}
	path := filepath.Join(t.TempDir(), "c.db")
	if err := Init(path); err != nil {
		t.Fatal(err)
	}
	frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":%q}}`, strings.Repeat("x", 4<<20))
	ws := make([]*Writer, writers)
	logs := make([]*syncbuf.Buffer, writers)
	for i := range ws {
		logs[i] = new(syncbuf.Buffer)
		// MaxPending holds a backlog of several commits, as a busy
		// recorder has, within the test's memory.
		w, err := NewWriter(path, WriterOptions{NoSync: true, MaxPending: 64 << 20, Log: logs[i]})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
			if err != nil {
				t.Error(err)
				return
			}
			for range frames {
				s.Append(S2C, time.Now(), frame, nil)
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	// In line, the turns that pass a waiter by are those of the writers
	// ahead of it and the one going on when it came: one each of the
	// others at most. Twice that leaves room for a waiter that was slow
	// to mark its place; starved ones were passed over 14 to 27 times.
	for i, w := range ws {
		if got := w.lease.mostPassedOver; got > 2*(writers-1) {
			t.Errorf("writer %d waited while the others took %d turns (it opened the file %d times), want %d at most", i, got, w.lease.opens, 2*(writers-1))
		}
		if strings.Contains(logs[i].String(), "will retry") {
			t.Errorf("writer %d: a commit failed:\n%s", i, logs[i].String())
		}
	}
	err := View(path, func(r *Reader) error {
		infos, err := r.Sessions()
		if len(infos) != writers {
			t.Errorf("%d sessions stored, want %d", len(infos), writers)
		}
		for _, in := range infos {
			if n := r.Count(in.ID); n != frames {
				t.Errorf("session %s: %d messages stored, want %d", in.ID, n, frames)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setStoppedWaiter sets stoppedWaiter for one test.
func setStoppedWaiter(t *testing.T, d time.Duration) {
	t.Helper()
	old := stoppedWaiter
	stoppedWaiter = d
	t.Cleanup(func() { stoppedWaiter = old })
}

// staleMark marks a wait on path as a process does that stopped while it
// waited: the mark stays until the test ends, and its turn is never taken.
func staleMark(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("wait marks are open-file-description locks, which only Linux has")
	}
	stopped, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopped.Close() })
	markWaiting(stopped)
}

// A waiter that stopped in line (its process suspended) does not hold up
// those behind it: they pass it once the file has stayed free for
// stoppedWaiter, long before their own place in line would run out.
func TestLease_StoppedWaiterIsPassed(t *testing.T) {
	setLease(t, leaseIdle, maxLeaseHold, time.Hour)
	tests := []struct {
		name string
		open func(path string) error
	}{
		{"read", Check},
		{"write", Init}, // a check, then the writable open: two waits in line
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			if err := Init(path); err != nil {
				t.Fatal(err)
			}
			staleMark(t, path)
			done := make(chan error, 1)
			go func() { done <- tt.open(path) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("still waiting behind a stopped waiter 20 s on")
			}
		})
	}
}

// Waiting in line alone never times an open out: past half its
// LockTimeout, an opener stops waiting for those ahead, whoever they are.
func TestLease_LineNeverTimesAnOpenOut(t *testing.T) {
	setLease(t, leaseIdle, maxLeaseHold, time.Second)
	setStoppedWaiter(t, time.Hour) // the waiter ahead is never passed as stopped
	path := filepath.Join(t.TempDir(), "c.db")
	if err := Init(path); err != nil {
		t.Fatal(err)
	}
	staleMark(t, path)
	if err := Check(path); errors.Is(err, ErrLocked) {
		t.Fatalf("a free file, a waiter ahead that never takes it: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}
