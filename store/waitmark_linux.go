package store

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// A process that finds the cassette locked marks itself as waiting, so that
// a writer holding the file between commits (see dbLease) lets go at its
// next commit instead of at the end of its lease, and so that the waiters
// take the file in the order they came (see waitLock).
//
// The mark is an open-file-description lock (fcntl F_OFD_SETLK) on one byte
// far past any page bbolt writes. Linux keeps these apart from the flock(2)
// lock bbolt takes on the whole file, so the mark never blocks bbolt, and
// the kernel drops it when the waiter's file is closed or the process dies.
// OFD locks belong to an open file, not a process, so they work between
// two handles in one process too.
//
// The byte is the waiter's place in line: waitMarkOffset plus the Unix
// time, in nanoseconds, when it began to wait (this fits an offset until
// 2116). Wall-clock time, because every process reads the same one, even
// in another time namespace; a step of the clock misorders only those who
// wait across it. Marks are read locks, so two waiters that came in the
// same nanosecond share a byte without blocking each other.
const waitMarkOffset = 1 << 62

// markWaiting notes that f's owner waits for the file lock from now on and
// returns its place in line. Failing to mark only delays the holder's
// release, so errors are ignored.
func markWaiting(f *os.File) (place int64) {
	place = waitMarkOffset + time.Now().UnixNano()
	markWaitingAt(f, place)
	return place
}

// markWaitingAt marks f's wait at the place in line it took before, with
// another open file.
func markWaitingAt(f *os.File, place int64) {
	mark := unix.Flock_t{Type: unix.F_RDLCK, Start: place, Len: 1}
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &mark)
}

// unmarkWaiting withdraws f's mark once it holds the file.
func unmarkWaiting(f *os.File) {
	all := unix.Flock_t{Type: unix.F_UNLCK, Start: waitMarkOffset} // Len 0: to the end
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &all)
}

// othersWaiting reports whether another open file has marked a wait.
func othersWaiting(f *os.File) bool { return waitingAhead(f, 0) }

// waitingAhead reports whether another open file marked a wait before
// place; with place 0, whether any did. f's own mark never counts.
func waitingAhead(f *os.File, place int64) bool {
	ahead := unix.Flock_t{Type: unix.F_WRLCK, Start: waitMarkOffset} // Len 0: to the end
	if place != 0 {
		if place <= waitMarkOffset {
			return false
		}
		ahead.Len = place - waitMarkOffset
	}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &ahead); err != nil {
		return false
	}
	return ahead.Type != unix.F_UNLCK
}
