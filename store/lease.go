package store

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Lease timing. Variables, so tests can make a lease outlast their lock
// timeout and show that a waiter is let in by its mark alone.
var (
	// leaseIdle: a writer that has committed nothing for this long closes
	// the file, so a quiet recorder leaves it free.
	leaseIdle = 50 * time.Millisecond
	// maxLeaseHold bounds one lease, so that a process that waits without
	// marking (another bbolt program) gets a turn too.
	maxLeaseHold = 500 * time.Millisecond
	// stoppedWaiter: a waiter ahead in line that leaves the file free for
	// this long is passed over. A waiter tries every millisecond; one that
	// does not is stopped (its process suspended while it waited), and its
	// mark stays until it goes on.
	stoppedWaiter = 50 * time.Millisecond
)

// dbLease keeps a Writer's handle on the cassette from one group commit to
// the next. Opening costs more than a commit under load: open, lock, map,
// read the freelist, then a page fault for each page the commit touches in
// the fresh mapping. Reopening for every commit took about half of the
// store's CPU at a few thousand messages a second.
//
// Holding the handle keeps the file locked, which DESIGN.md's other
// processes (recorders, a following inspector) must not notice, so the
// writer gives the file up after any commit that finds another process
// waiting for it (waiters mark themselves, see markWaiting), when it has
// been idle for leaseIdle, and after maxLeaseHold in any case. A writer
// that gave the file up to waiters and has more to commit waits behind
// them (see waitLock): reopening at once, it took the file back before
// they noticed it was free, and with six busy recorders one waited out
// LockTimeout.
//
// A dbLease is not safe for concurrent use; the Writer's flushMu guards it.
type dbLease struct {
	path string
	db   *bolt.DB
	file *os.File // the handle's file, watched for waiters
	// taken is when the handle was opened; used when it was last used.
	taken, used time.Time
	opens       int // how many times the file was opened, for tests
	// mostPassedOver is the most turns other writers of this process took
	// while one open of this lease waited for the file; for tests, which
	// count turns rather than time waits (see leaseTurns).
	mostPassedOver uint64
}

// leaseTurns numbers the turns the writers of this process take on their
// files, one for each open of a lease. A writer holds the file from its
// open to its release, so the turns of the writers sharing a cassette are
// numbered in the order they got it.
var leaseTurns atomic.Uint64

// get returns the held handle, opening the file if it is not held.
func (l *dbLease) get() (*bolt.DB, error) {
	if l.db == nil {
		before := leaseTurns.Load()
		db, f, err := openDBFile(l.path, true)
		if err != nil {
			return nil, err
		}
		// The turns numbered since before went to others while this open
		// waited, the one going on when it began perhaps among them.
		l.mostPassedOver = max(l.mostPassedOver, leaseTurns.Add(1)-1-before)
		l.db, l.file, l.taken = db, f, time.Now()
		l.opens++
	}
	l.used = time.Now()
	return l.db, nil
}

// yield closes the handle if another process waits for the file, if it has
// not been used for leaseIdle, or if it has been held for maxLeaseHold.
func (l *dbLease) yield() error {
	if l.db == nil {
		return nil
	}
	now := time.Now()
	if now.Sub(l.used) < leaseIdle && now.Sub(l.taken) < maxLeaseHold && !othersWaiting(l.file) {
		return nil
	}
	return l.release()
}

// release closes the handle, if held.
func (l *dbLease) release() error {
	if l.db == nil {
		return nil
	}
	err := l.db.Close()
	l.db, l.file = nil, nil
	return err
}

// waitTurn is one opener's place in line for the file.
type waitTurn struct {
	place int64 // its mark's place (see markWaiting); 0 before it waits
	// deferUntil: past it, the opener stops waiting for those ahead, so
	// that waiting in line never times an open out by itself.
	deferUntil time.Time
	// freeSince is when the file was first seen free, with others still
	// ahead, since it was last seen held.
	freeSince time.Time
	passed    bool // those ahead were passed over
}

// waitLock takes f's flock, polling every millisecond, because bbolt's own
// wait sleeps 50 ms between tries, which would stall group commits behind
// a concurrent writer. Waiters take the file in the order they began to
// wait, each marking its place (markWaiting): one that finds others ahead
// lets the file go by, even when it is free, so that a writer that has
// just let it go, or anyone new, cannot take it back ahead of those who
// waited, however quickly it asks. A process that waits without marking
// (another bbolt program) is not in line and tries when it likes, as all
// do where marks do not exist (waitmark_other.go).
//
// turn keeps the opener's place for its next open, so a writable open
// loses nothing to the read that checks the file first.
func waitLock(f *os.File, exclusive bool, turn *waitTurn) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	start := time.Now()
	deadline := start.Add(LockTimeout)
	noticed := false
	for waiting := false; ; waiting = true {
		if turn.mayTry(f) {
			err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
			if err == nil {
				if waiting {
					unmarkWaiting(f)
				}
				return nil
			}
			if err != syscall.EWOULDBLOCK {
				return err
			}
		}
		if time.Now().After(deadline) {
			if who := lockHolders(f); who != "" {
				return fmt.Errorf("%w (waited %s; held by %s)", ErrLocked, LockTimeout, who)
			}
			return fmt.Errorf("%w (waited %s)", ErrLocked, LockTimeout)
		}
		if !waiting {
			turn.join(f) // a writer between commits lets go when it sees this
		}
		if !noticed && time.Since(start) >= LockWaitNoticeAfter {
			noticed = true
			if n := LockWaitNotice; n != nil {
				n(f.Name())
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// LockWaitNotice, when set, is told the path of a cassette whose lock an
// open has waited LockWaitNoticeAfter for, once per open: a program says
// so, rather than sit silent for up to LockTimeout behind another
// process. Set it before any open; it may be called from any goroutine.
var LockWaitNotice func(path string)

// NoticeLockWaits sets LockWaitNotice to say on w, once per process, that
// prog is waiting for a cassette another process holds.
func NoticeLockWaits(prog string, w io.Writer) {
	var once sync.Once
	LockWaitNotice = func(path string) {
		once.Do(func() {
			fmt.Fprintf(w, "%s: waiting for %s: another process holds its lock (waiting up to %s)\n", prog, path, LockTimeout)
		})
	}
}

// LockWaitNoticeAfter is how long an open waits for the lock before it
// calls LockWaitNotice: well past the waits recorders take turns with.
const LockWaitNoticeAfter = time.Second

// join marks f's wait: at the turn's place if it has one, else at a new
// place, the last in line.
func (t *waitTurn) join(f *os.File) {
	if t.place != 0 {
		markWaitingAt(f, t.place)
		return
	}
	t.place = markWaiting(f)
	t.deferUntil = time.Now().Add(LockTimeout / 2)
}

// mayTry says whether the opener may try for the file: nobody waits ahead
// of it, or those who do are passed over, stopped or waited for too long.
func (t *waitTurn) mayTry(f *os.File) bool {
	if t.passed || !waitingAhead(f, t.place) {
		return true
	}
	now := time.Now()
	if t.place != 0 && now.After(t.deferUntil) {
		t.passed = true
		return true
	}
	if !fileFree(f) {
		t.freeSince = time.Time{}
		return false
	}
	if t.freeSince.IsZero() {
		t.freeSince = now
	}
	if now.Sub(t.freeSince) >= stoppedWaiter {
		t.passed = true
		return true
	}
	return false
}

// fileFree says whether nobody holds f's flock, taking it for a moment to
// see.
func fileFree(f *os.File) bool {
	fd := int(f.Fd())
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	_ = syscall.Flock(fd, syscall.LOCK_UN)
	return true
}
