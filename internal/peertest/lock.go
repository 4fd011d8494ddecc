package peertest

import (
	"os"
	"sync"
	"syscall"
	"testing"
)

// lockFile takes an exclusive lock on path, waiting for it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// HoldLock takes the exclusive lock on the cassette at path that a bbolt
// writer takes, as another process (another recorder committing, any bbolt
// program) would, waiting for whoever holds it to let go. The returned
// func lets it go; so does the test's end.
func HoldLock(tb testing.TB, path string) (unlock func()) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Fatal(err) // lockFile would make an empty file there
	}
	let, err := lockFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	unlock = func() { once.Do(let) }
	tb.Cleanup(unlock)
	return unlock
}
