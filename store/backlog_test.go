package store

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"
)

// backlogFrame is a 256 KiB frame: four make a piece of backlogWriter's
// 1 MiB commits.
var backlogFrame = append(append([]byte(`{"jsonrpc":"2.0","method":"n","params":{"s":"`), bytes.Repeat([]byte{'x'}, 256<<10-48)...), `"}}`...)

// holdFile takes the cassette's lock as another process would, and gives
// the file's handle.
func holdFile(t *testing.T, path string) *os.File {
	t.Helper()
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return other
}

// WaitBacklog does not return while what waited for the store when it was
// called cannot be stored (another process holds the file), and returns
// once it is.
func TestSession_WaitBacklogWaitsForTheStore(t *testing.T) {
	setBacklogWait(t, time.Hour)
	w, other, waited := waitBehindHeldFile(t)

	// The writer marks the file while it waits for it: a commit was tried
	// and cannot have stored anything.
	for deadline := time.Now().Add(30 * time.Second); !othersWaiting(other); {
		if time.Now().After(deadline) {
			t.Fatal("the writer did not try to commit in 30 s")
		}
		time.Sleep(time.Millisecond) // polling, not synchronising
	}
	select {
	case <-waited:
		t.Fatal("WaitBacklog returned while nothing could be stored")
	default:
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if left := pendingWhenWaited(t, w, waited, "after the file was let go"); left != 0 {
		t.Errorf("WaitBacklog returned with %d bytes not stored", left)
	}
}

// Frames appended after WaitBacklog began do not hold it: it returns once
// the store has caught up with what waited before, though a backlog that
// came later is still there (a session flooding the store would
// otherwise keep a long frame of another waiting for as long as it
// lasts).
func TestSession_WaitBacklogIgnoresLaterFrames(t *testing.T) {
	path, w, s := backlogWriter(t)
	t.Cleanup(func() { w.Close() }) // before holdFile's cleanup, which lets the file go first
	other := holdFile(t, path)

	s.Append(S2C, time.Now(), backlogFrame, nil)
	w.mu.Lock()
	target := w.appendedBytes
	w.mu.Unlock()
	for range 63 {
		s.Append(S2C, time.Now(), backlogFrame, nil)
	}
	waited := make(chan struct{})
	go func() {
		w.mu.Lock()
		w.waitStoredLocked(target, time.Hour)
		w.mu.Unlock()
		close(waited)
	}()

	// Let the writer store a piece, then hold the file again, as in
	// TestWriter_BacklogLetsWaitersIn: the later frames are not all stored.
	holdAgainOnce(t, other, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.storedBytes >= target
	})
	unmarkWaiting(other)
	w.mu.Lock()
	later := w.pendingBytes
	w.mu.Unlock()
	if later == 0 {
		t.Fatal("the whole backlog was stored before the file was held again: the test cannot tell")
	}
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		w.mu.Lock()
		left := w.pendingBytes
		w.mu.Unlock()
		t.Fatalf("the frame that waited is stored, yet the wait goes on 30 s later (%d later bytes wait)", left)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
}

// holdAgainOnce lets go of the file that other holds and waits for it
// again, in line as mcptape's openers wait (waitLock), until stored
// (asked with the file held, so that the writer cannot go on meanwhile)
// says enough is stored. It returns holding the file.
func holdAgainOnce(t *testing.T, other *os.File, stored func() bool) {
	t.Helper()
	fd := int(other.Fd())
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := syscall.Flock(fd, syscall.LOCK_UN); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no piece of the backlog was stored in 30 s")
		}
		if err := waitLock(other, true, new(waitTurn)); err != nil {
			t.Fatal(err)
		}
		if stored() {
			return
		}
	}
}

// setBacklogWait sets maxBacklogWait for one test.
func setBacklogWait(t *testing.T, d time.Duration) {
	t.Helper()
	old := maxBacklogWait
	maxBacklogWait = d
	t.Cleanup(func() { maxBacklogWait = old })
}

// WaitBacklog holds the traffic behind a store that is stuck only so
// long: it returns, with nothing stored, once maxBacklogWait passes, or
// once a commit fails (here the lock's wait times out), and what waits
// stays buffered for the commit that works.
func TestSession_WaitBacklogGivesUpOnAStuckStore(t *testing.T) {
	for _, tc := range []struct {
		name           string
		wait, lockWait time.Duration
	}{
		{"maxBacklogWait passes", 20 * time.Millisecond, time.Hour},
		{"a commit fails", time.Hour, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setBacklogWait(t, tc.wait)
			setLease(t, leaseIdle, maxLeaseHold, tc.lockWait)
			w, other, waited := waitBehindHeldFile(t)
			if left := pendingWhenWaited(t, w, waited, "with the store stuck"); left != 4*len(backlogFrame) {
				t.Errorf("%d bytes wait for the store; want all %d", left, 4*len(backlogFrame))
			}
			if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatalf("the store works again, yet: %v", err)
			}
		})
	}
}

// waitBehindHeldFile appends four frames while another process (other)
// holds the file, and calls WaitBacklog; waited closes when it returns.
func waitBehindHeldFile(t *testing.T) (w *Writer, other *os.File, waited chan struct{}) {
	t.Helper()
	path, w, s := backlogWriter(t)
	t.Cleanup(func() { w.Close() }) // before holdFile's cleanup, which lets the file go first
	other = holdFile(t, path)
	for range 4 {
		s.Append(S2C, time.Now(), backlogFrame, nil)
	}
	waited = make(chan struct{})
	go func() { s.WaitBacklog(); close(waited) }()
	return w, other, waited
}

// pendingWhenWaited waits up to 30 s for waited to close and returns the
// frame bytes still waiting for the store then.
func pendingWhenWaited(t *testing.T, w *Writer, waited chan struct{}, when string) int {
	t.Helper()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		t.Fatalf("WaitBacklog still waits 30 s later, %s", when)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pendingBytes
}
