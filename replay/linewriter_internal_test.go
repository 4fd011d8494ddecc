package replay

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// A long answer goes out whole, on a line of its own, and the writer keeps
// no buffer the size of it afterwards: it kept one as long as the longest
// answer for the rest of the session, beside the copy it made of each.
func TestLineWriter_LongLineNotKept(t *testing.T) {
	var out bytes.Buffer
	l := &lineWriter{w: &out}
	long := []byte(`"` + strings.Repeat("x", 4<<20) + `"`)
	for _, msg := range [][]byte{[]byte(`{"a":1}`), long, []byte(`{"b":2}`)} {
		if err := l.write(msg); err != nil {
			t.Fatal(err)
		}
	}
	if want := `{"a":1}` + "\n" + string(long) + "\n" + `{"b":2}` + "\n"; out.String() != want {
		t.Errorf("wrote %d bytes, not the three lines (%d bytes)", out.Len(), len(want))
	}
	if cap(l.buf) > oneWriteLine {
		t.Errorf("after a %d-byte line the writer keeps a %d-byte buffer, want at most %d", len(long), cap(l.buf), oneWriteLine)
	}
}

// Lines written at once by many senders, long and short, never interleave.
func TestLineWriter_ConcurrentLinesWhole(t *testing.T) {
	var out bytes.Buffer
	l := &lineWriter{w: &out}
	lines := map[string]bool{}
	var wg sync.WaitGroup
	for i := range 8 {
		msg := strings.Repeat(string(rune('a'+i)), 100+i*(oneWriteLine/3))
		lines[msg] = true
		wg.Go(func() {
			for range 20 {
				if err := l.write([]byte(msg)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != 8*20 {
		t.Fatalf("%d lines, want %d", len(got), 8*20)
	}
	for i, line := range got {
		if !lines[line] {
			t.Fatalf("line %d (%d bytes, starting %.10q) is not one that was written whole", i+1, len(line), line)
		}
	}
}
