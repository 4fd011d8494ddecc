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
	"runtime"
)

// ErrTooLong is returned for a line longer than the reader's limit.
var ErrTooLong = errors.New("line too long")

// LineReader reads "\n"-terminated lines of any length up to a limit.
type LineReader struct {
	r     *bufio.Reader
	limit int
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
	if total >= collectAfter {
		// The pieces are as large as the line and now garbage. Collect
		// them before the line's next consumer (the store's commit)
		// allocates as much again, so a huge line costs about twice its
		// size at the peak, not three or four times.
		runtime.GC()
	}
	return line, nil
}

// collectAfter is the line length past which Next collects its garbage at
// once; lines this long are rare and copying them costs more than a GC.
const collectAfter = 8 << 20

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
