//go:build unix

package inspector

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to write and read from two
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestOpenSaying_Locked: opening a cassette another process has locked
// says what it waits for while it waits, not only when it gives up.
func TestOpenSaying_Locked(t *testing.T) {
	path := writeCassette(t, sampleSession)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		m, _, err := openSaying(path, &out, 20*time.Millisecond)
		if err == nil && m.Len() != len(sampleSession) {
			t.Errorf("opened %d messages", m.Len())
		}
		done <- err
	}()
	deadline := time.Now().Add(wait)
	for !strings.Contains(out.String(), "waiting for the lock another process holds") {
		if time.Now().After(deadline) {
			t.Fatalf("nothing said while the open waits: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("open after the lock went: %v", err)
	}
}
