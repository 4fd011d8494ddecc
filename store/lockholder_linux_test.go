package store

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// An open that gives up waiting for the lock names who holds it, as
// /proc/locks lists the holder: here this test process, holding the
// exclusive flock bbolt's writer takes, through a handle of its own.
func TestOpen_LockedNamesTheHolder(t *testing.T) {
	path := importTape(t, markedTape(1))
	holdFile(t, path)
	setLease(t, leaseIdle, maxLeaseHold, 50*time.Millisecond)
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(waited 50ms; held by pid %d (%s))", os.Getpid(), comm[:len(comm)-1])
	_, err = Load(path)
	if !errors.Is(err, ErrLocked) || err.Error() != path+": "+ErrLocked.Error()+" "+want {
		t.Errorf("Load of a locked cassette: %v\nwant %s: %v %s", err, path, ErrLocked, want)
	}
}
