package store

import (
	"os"
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
// been idle for leaseIdle, and after maxLeaseHold in any case.
//
// A dbLease is not safe for concurrent use; the Writer's flushMu guards it.
type dbLease struct {
	path string
	db   *bolt.DB
	file *os.File // the handle's file, watched for waiters
	// taken is when the handle was opened; used when it was last used.
	taken, used time.Time
	opens       int // how many times the file was opened, for tests
}

// get returns the held handle, opening the file if it is not held.
func (l *dbLease) get() (*bolt.DB, error) {
	if l.db == nil {
		db, f, err := openDBFile(l.path, true)
		if err != nil {
			return nil, err
		}
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
