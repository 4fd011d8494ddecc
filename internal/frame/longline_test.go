package frame

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += k
	return k, err
}

// BeforeLongLine runs once for each line longer than LongLine, before
// the reader has taken much more than LongLine bytes of it, and never
// for a short line; the lines are read as without it.
func TestLineReader_BeforeLongLine(t *testing.T) {
	long := strings.Repeat("L", LongLine+1<<20)
	lines := []string{"short\n", long + "\n", "x\n", long + "\n", strings.Repeat("s", 100<<10) + "\n", long}
	in := &countingReader{r: strings.NewReader(strings.Join(lines, ""))}
	lr := NewLineReader(in, 0)

	var events []string
	lineStart := 0 // input offset of the line being read
	lr.BeforeLongLine(func() {
		// The reader's buffer (64 KiB) may hold a little more.
		if ahead := in.n - lineStart; ahead > LongLine+128<<10 {
			t.Errorf("BeforeLongLine ran with %d bytes of the line read, want LongLine (%d) and a buffer at most", ahead, LongLine)
		}
		events = append(events, "wait")
	})
	for i, want := range lines {
		got, err := lr.Next()
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if string(got) != want {
			t.Fatalf("line %d: got %d bytes, want %d", i, len(got), len(want))
		}
		events = append(events, fmt.Sprint(len(got)))
		lineStart += len(got)
	}
	if _, err := lr.Next(); err != io.EOF {
		t.Fatalf("after the last line: %v, want io.EOF", err)
	}
	want := []string{"6", "wait", fmt.Sprint(len(long) + 1), "2", "wait", fmt.Sprint(len(long) + 1), fmt.Sprint(100<<10 + 1), "wait", fmt.Sprint(len(long))}
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Errorf("events (a wait, or the length of a line read):\n got %v\nwant %v", events, want)
	}
}

// A long line's pieces, garbage once the line is put together, are not
// kept in the process for later allocations: the next big one does not
// fit in them and would take as much memory again (see releaseGarbage).
func TestLineReader_LongLineGarbageReleased(t *testing.T) {
	const size = 3 * LongLine
	lr := NewLineReader(strings.NewReader(strings.Repeat("L", size)+"\n"), 0)
	line, err := lr.Next()
	if err != nil || len(line) != size+1 {
		t.Fatalf("got %d bytes, %v; want %d", len(line), err, size+1)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if kept := ms.HeapIdle - ms.HeapReleased; kept > LongLine/2 {
		t.Errorf("%d MiB of free memory kept after a %d MiB line, want under %d MiB", kept>>20, size>>20, LongLine>>21)
	}
	runtime.KeepAlive(line)
}
