package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once, as a server's goroutines and a test are
// (run with -race): every write arrives whole.
func TestBuffer_Concurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 || len(b.String()) != 800*5 {
		t.Errorf("%d whole lines in %d bytes, want 800 in 4000", got, len(b.String()))
	}
}
