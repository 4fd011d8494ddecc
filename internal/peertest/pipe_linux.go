package peertest

import (
	"os"
	"strconv"
	"testing"
)

// PipePath returns the name of a pipe that holds b, as a shell's <(…)
// names one (/dev/fd/63): a name that says nothing of what it holds, and
// a file that can be read once and not sought in. A goroutine writes b.
// Call done once the reader is finished with it: it closes the read end,
// which lets the writer go if the reader stopped before the end (a
// refused cassette), and waits for the writer. Linux only (/dev/fd).
func PipePath(t testing.TB, b []byte) (path string, done func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		_, _ = w.Write(b) // fails only when the reader stopped early
		w.Close()
	}()
	return "/dev/fd/" + strconv.Itoa(int(r.Fd())), func() {
		r.Close()
		<-wrote
	}
}
