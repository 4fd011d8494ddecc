// Package frame splits byte streams into the frames MCP peers exchange on
// stdio: one message per line.
//
// It keeps every byte: a line is returned with its "\n" (and any "\r"
// before it), so a proxy can forward exactly what it read. It never parses
// the JSON inside.
package frame

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
)

// ErrTooLong is returned for a line longer than the reader's limit.
var ErrTooLong = errors.New("line too long")

// LineReader reads "\n"-terminated lines of any length up to a limit.
type LineReader struct {
	r          *bufio.Reader
	limit      int
	beforeLong func()
}

// DefaultLimit is far above the 64 MiB mcpspy must carry and the 10 MiB
// the TypeScript SDK allows, and still bounds what one bad peer can make
// us hold.
const DefaultLimit = 1 << 30

// NewLineReader reads from r. limit ≤ 0 means DefaultLimit.
func NewLineReader(r io.Reader, limit int) *LineReader {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// BeforeLongLine sets fn to run once for each line that grows past
// LongLine bytes, as soon as it does, before the reader takes the rest of
// it; nil runs nothing. A caller that may still hold the last long line
// (a store that has not committed it) waits there for it to go: a run of
// long lines then costs what one does, not one per line that waits.
func (l *LineReader) BeforeLongLine(fn func()) { l.beforeLong = fn }

// Next returns the next line, "\n" included, in a new slice the caller
// owns. At end of input a final line without "\n" is returned with a nil
// error; the call after it returns io.EOF.
func (l *LineReader) Next() ([]byte, error) {
	chunk, err := l.r.ReadSlice('\n')
	if err == nil {
		return append(make([]byte, 0, len(chunk)), chunk...), nil
	}
	// A long line: gather the pieces, then copy them once into an exact fit.
	var parts [][]byte
	total := 0
	for errors.Is(err, bufio.ErrBufferFull) {
		total += len(chunk)
		if total > l.limit {
			return nil, fmt.Errorf("%w: over %d bytes", ErrTooLong, l.limit)
		}
		parts = append(parts, append([]byte(nil), chunk...))
		if total-len(chunk) < LongLine && total >= LongLine {
			l.longLineBegins()
		}
		chunk, err = l.r.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	total += len(chunk)
	if total == 0 {
		return nil, io.EOF
	}
	line := make([]byte, 0, total)
	for i, p := range parts {
		line = append(line, p...)
		parts[i] = nil
	}
	line = append(line, chunk...)
	if total >= LongLine {
		// The pieces are as large as the line and now garbage. Let them
		// go before the line's next consumer (the store's commit, a
		// replay's match key or decoded arguments) allocates as much
		// again, so a huge line costs about twice its size at the peak,
		// not three or four times.
		releaseGarbage()
	}
	return line, nil
}

// longLineBegins runs when the line being read grows past LongLine: after
// the caller's wait, the garbage the last long line left (its copy in
// the store's commit, its pieces, what a replay made of it) goes before
// this one takes as much memory again, so that the collector's goal, set
// while that garbage was live, does not let the heap hold both.
func (l *LineReader) longLineBegins() {
	if l.beforeLong != nil {
		l.beforeLong()
	}
	releaseGarbage()
}

// releaseGarbage collects garbage and returns the memory it held to the
// operating system. Collected, a long line's memory would stay in the
// process, counted in its RSS, for the next allocations to reuse; but the
// next big one needs a line's size in one piece, and Go's heap did not
// find it among the line's freed 64 KiB pieces: it took new pages, and
// the peak grew by a line (mcpmock held a 64 MiB tools/call at 3.2 times
// its size; released, at 2.2). Returned, the pages cost a page fault each
// when used again, a few hundredths of a second for 64 MiB.
func releaseGarbage() { debug.FreeOSMemory() }

// LongLine is the line length past which a LineReader collects garbage at
// once (and runs BeforeLongLine); lines this long are rare and copying
// them costs more than a collection.
const LongLine = 8 << 20

// Content is the frame inside a line: the line without its final "\n".
// A "\r" before it stays: it is part of what the peer sent.
func Content(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		return line[:n-1]
	}
	return line
}

// EachLine reads r until it ends and calls fn with the content of each
// line (Content: without its terminator), a last line without one
// included. It returns what ended r (io.EOF at its end).
func EachLine(r io.Reader, fn func(content []byte)) error {
	lines := NewLineReader(r, 0)
	for {
		line, err := lines.Next()
		if len(line) > 0 {
			fn(Content(line))
		}
		if err != nil {
			return err
		}
	}
}
