package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// A process that finds the cassette locked marks itself as waiting, so that
// a writer holding the file between commits (see dbLease) lets go at its
// next commit instead of at the end of its lease.
//
// The mark is an open-file-description lock (fcntl F_OFD_SETLK) on one byte
// far past any page bbolt writes. Linux keeps these apart from the flock(2)
// lock bbolt takes on the whole file, so the mark never blocks bbolt, and
// the kernel drops it when the waiter's file is closed or the process dies.
// OFD locks belong to an open file, not a process, so they work between
// two handles in one process too.
const waitMarkOffset = 1 << 62

func waitMark(kind int16) *unix.Flock_t {
	return &unix.Flock_t{Type: kind, Whence: 0, Start: waitMarkOffset, Len: 1}
}

// markWaiting notes that f's owner waits for the file lock. Failing to mark
// only delays the holder's release, so errors are ignored.
func markWaiting(f *os.File) {
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, waitMark(unix.F_RDLCK))
}

// unmarkWaiting withdraws f's mark once it holds the file.
func unmarkWaiting(f *os.File) {
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, waitMark(unix.F_UNLCK))
}

// othersWaiting reports whether another open file has marked a wait.
func othersWaiting(f *os.File) bool {
	lk := waitMark(unix.F_WRLCK)
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
