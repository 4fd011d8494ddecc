// Package sse reads a server-sent event stream one event at a time while
// keeping the exact bytes of each event, so that a proxy can forward them
// unchanged and still know what each event said.
//
// It follows the WHATWG parsing rules (lines end in "\r\n", "\n" or "\r";
// a leading space after the colon is dropped; data lines are joined with
// "\n"; lines starting with ":" are comments). It never waits for more input
// than the event it is reading, so a live stream is never buffered whole.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Event is one event as it arrived.
type Event struct {
	// Raw is every byte read for this event: fields, comments and line
	// ends, up to and including the blank line that ended it. Concatenating
	// the Raw of all events gives back the stream.
	Raw []byte
	// ID is the id field; HasID says one was present (an empty id resets
	// the last event id, which differs from none).
	ID    string
	HasID bool
	// Type is the event field ("" means the default, "message").
	Type string
	// Data is the data lines joined with "\n". HasData says a data field
	// was present, even an empty one.
	Data    []byte
	HasData bool
	// Retry is the retry field as sent.
	Retry string
	// Complete is false for bytes the stream ended on without the blank
	// line that dispatches an event. Browsers drop such an event; a
	// recorder may still want to see it.
	Complete bool
}

// ErrTooLong is returned when one event exceeds the reader's maximum size.
var ErrTooLong = errors.New("sse: event too long")

// DefaultMaxEvent bounds one event's raw size: a message of 64 MiB, the
// most mcpspy keeps of one (the TS SDK accepts 10 MiB lines on stdio),
// with room for its framing (the "data: " of each line, an id, an event
// name). A bound of 64 MiB counted the framing, and a 64 MiB message sent
// as an event went unrecorded.
const DefaultMaxEvent = 64<<20 + 64<<10

// Reader parses events from a stream. It is not safe for concurrent use.
type Reader struct {
	src    io.Reader
	buf    []byte
	bufp   *[]byte // buf's pooled slice, until Release
	r, w   int
	err    error
	skipLF bool // the last line ended in "\r": a "\n" right after belongs to it
	max    int
	done   bool
	// beforeLong runs once for each event that grows past LongEvent bytes.
	beforeLong func()
}

// NewReader reads events from src. max bounds one event's raw size;
// 0 means DefaultMaxEvent.
func NewReader(src io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	bp := readBufs.Get().(*[]byte)
	return &Reader{src: src, buf: *bp, bufp: bp, max: max}
}

// LongEvent is the size past which an event is long: Next runs the
// function BeforeLongEvent set as an event grows past it.
const LongEvent = 8 << 20

// BeforeLongEvent sets fn to run once for each event that grows past
// LongEvent bytes, as soon as it does, before the reader takes the rest of
// it; nil runs nothing. A caller that may still hold the last long event
// (a store that has not recorded it yet) waits there for it to go: a run
// of long events then costs what one does, not one per event that waits.
func (rd *Reader) BeforeLongEvent(fn func()) { rd.beforeLong = fn }

// grew notes that the event being read grew from before to after bytes.
func (rd *Reader) grew(before, after int) {
	if before < LongEvent && after >= LongEvent && rd.beforeLong != nil {
		rd.beforeLong()
	}
}

// readBufs holds read buffers between readers: a proxy makes a reader per
// answer, and a fresh 4 KiB each time was the largest allocation on its
// path. Events never alias the buffer (Next copies them out).
var readBufs = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// errReleased ends a reader that was released.
var errReleased = errors.New("sse: reader released")

// Release hands the reader's buffer back for another reader. Neither the
// reader nor what Buffered returned may be used after; Next reports an
// error. Not calling Release is fine: the buffer is then collected.
func (rd *Reader) Release() {
	if rd.bufp == nil {
		return
	}
	readBufs.Put(rd.bufp)
	rd.bufp, rd.buf, rd.r, rd.w = nil, nil, 0, 0
	rd.done, rd.err = true, errReleased
}

// Next returns the next event. At the end of the stream it returns
// io.EOF (or the read error) with no event. Bytes left after the last
// complete event come back first as an Event with Complete false.
//
// When an event exceeds the maximum size, Next returns ErrTooLong with the
// bytes read so far in Raw; the rest of the stream is still available
// through Buffered and the underlying reader.
func (rd *Reader) Next() (Event, error) {
	ev, err := rd.next()
	if len(ev.Raw) >= LongEvent {
		// The buffers the event grew through are as large as it and
		// now garbage: collected before its next consumer (a store's
		// commit) allocates as much again, they cost nothing more.
		runtime.GC()
	}
	return ev, err
}

func (rd *Reader) next() (Event, error) {
	var ev Event
	if rd.done {
		return ev, rd.err
	}
	var raw []byte
	var data []span
	for {
		start := len(raw)
		var a, b int
		var term bool
		var err error
		raw, a, b, term, err = rd.line(raw)
		if err != nil && (errors.Is(err, ErrTooLong) || len(raw) == start) {
			if errors.Is(err, ErrTooLong) {
				ev.Raw = raw
				return ev, err
			}
			rd.done = true
			if len(raw) == 0 {
				return ev, err
			}
			ev.Raw = raw
			ev.Data = joinData(raw, data)
			return ev, nil
		}
		content := raw[a:b]
		if len(content) == 0 && term {
			ev.Raw = raw
			ev.Complete = true
			ev.Data = joinData(raw, data)
			return ev, nil
		}
		name, value := content, []byte(nil)
		if i := bytes.IndexByte(content, ':'); i >= 0 {
			name, value = content[:i], content[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch {
		case len(content) > 0 && content[0] == ':': // comment
		case string(name) == "data":
			ev.HasData = true
			off := a + (len(content) - len(value))
			data = append(data, span{off, off + len(value)})
		case string(name) == "id":
			ev.ID, ev.HasID = string(value), true
		case string(name) == "event":
			ev.Type = string(value)
		case string(name) == "retry":
			ev.Retry = string(value)
		}
		if !term { // the stream ended inside this line
			rd.done = true
			ev.Raw = raw
			ev.Data = joinData(raw, data)
			return ev, nil
		}
	}
}

// span is a data field's value within an event's raw bytes.
type span struct{ a, b int }

func joinData(raw []byte, parts []span) []byte {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		p := parts[0]
		return raw[p.a:p.b:p.b]
	}
	n := len(parts) - 1
	for _, p := range parts {
		n += p.b - p.a
	}
	out := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			out = append(out, '\n')
		}
		out = append(out, raw[p.a:p.b]...)
	}
	return out
}

// line appends the next line, terminator included, to dst and returns the
// content's bounds in dst. term is false if the stream ended first.
func (rd *Reader) line(dst []byte) (out []byte, a, b int, term bool, err error) {
	if rd.skipLF {
		if rd.r == rd.w && rd.err == nil {
			rd.fill()
		}
		if rd.r < rd.w {
			rd.skipLF = false
			if rd.buf[rd.r] == '\n' {
				dst = append(dst, '\n')
				rd.r++
			}
		}
	}
	a = len(dst)
	var long pieces // the line past LongEvent bytes of its own
	for {
		chunk := rd.buf[rd.r:rd.w]
		if i := bytes.IndexAny(chunk, "\r\n"); i >= 0 {
			rd.grew(len(dst)+long.n, len(dst)+long.n+i+1)
			if long.n > 0 {
				dst = long.join(dst, chunk[:i+1])
			} else {
				dst = append(dst, chunk[:i+1]...)
			}
			rd.r += i + 1
			b = len(dst) - 1
			if chunk[i] == '\r' {
				if rd.r < rd.w {
					if rd.buf[rd.r] == '\n' {
						dst = append(dst, '\n')
						rd.r++
					}
				} else {
					rd.skipLF = true
				}
			}
			if len(dst) > rd.max {
				return dst, a, b, true, fmt.Errorf("%w (more than %d bytes)", ErrTooLong, rd.max)
			}
			return dst, a, b, true, nil
		}
		n := len(dst) + long.n
		rd.grew(n, n+len(chunk))
		if long.n > 0 || len(dst)-a >= LongEvent {
			long.add(chunk)
		} else {
			dst = append(dst, chunk...)
		}
		rd.r = rd.w
		if n+len(chunk) > rd.max {
			dst = long.join(dst, nil)
			return dst, a, len(dst), false, fmt.Errorf("%w (more than %d bytes)", ErrTooLong, rd.max)
		}
		if rd.err != nil {
			dst = long.join(dst, nil)
			return dst, a, len(dst), false, rd.err
		}
		rd.fill()
	}
}

// pieces gathers a line that is long by itself (a 64 MiB data line), to
// be copied once into an exact fit: growing it by append would hold the
// last two sizes at once, and a quarter more than the line for good,
// where the store keeps the event until it is written.
type pieces struct {
	parts [][]byte
	n     int
}

// longPiece is the size of the pieces a long line is gathered in.
const longPiece = 1 << 20

func (p *pieces) add(b []byte) {
	p.n += len(b)
	for len(b) > 0 {
		if len(p.parts) == 0 || len(p.parts[len(p.parts)-1]) == longPiece {
			p.parts = append(p.parts, make([]byte, 0, longPiece))
		}
		last := &p.parts[len(p.parts)-1]
		k := min(len(b), longPiece-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

// join returns dst, the pieces and tail in one slice, with room for what
// usually follows such a line in its event (the blank line that ends it)
// but no more. Without pieces it appends tail to dst.
func (p *pieces) join(dst, tail []byte) []byte {
	if p.n == 0 {
		return append(dst, tail...)
	}
	out := make([]byte, 0, len(dst)+p.n+len(tail)+joinSlack)
	out = append(out, dst...)
	for i, part := range p.parts {
		out = append(out, part...)
		p.parts[i] = nil
	}
	p.parts, p.n = nil, 0
	return append(out, tail...)
}

// joinSlack is the room join leaves after a long line: its "\r\n" or
// "\n", the event's blank line, an id line after it.
const joinSlack = 4 << 10

func (rd *Reader) fill() {
	for tries := 0; tries < 100; tries++ {
		n, err := rd.src.Read(rd.buf)
		rd.r, rd.w = 0, n
		if err != nil {
			rd.err = err
		}
		if n > 0 || err != nil {
			return
		}
	}
	rd.err = io.ErrNoProgress
}

// Buffered returns bytes read from the source but not yet returned in an
// event (after ErrTooLong, the caller forwards them, then the source).
func (rd *Reader) Buffered() []byte { return rd.buf[rd.r:rd.w] }

// Messages reads events from src until it ends and calls fn with each one
// that carries data: an event without (a 2025-11-25 priming event, a
// keep-alive) is no message. It returns what ended the stream (io.EOF at
// its end). max is as for NewReader.
func Messages(src io.Reader, max int, fn func(Event)) error {
	rd := NewReader(src, max)
	for {
		ev, err := rd.Next()
		if err != nil {
			return err
		}
		if len(ev.Data) > 0 {
			fn(ev)
		}
	}
}
