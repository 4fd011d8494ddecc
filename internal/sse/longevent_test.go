package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// BeforeLongEvent runs once for each event longer than LongEvent, before
// the reader has taken much more than LongEvent bytes of it, whether one
// data line or many make it long, and never for a short event; the
// events are read as without it.
func TestReader_BeforeLongEvent(t *testing.T) {
	oneLine := "data: " + strings.Repeat("L", LongEvent+1<<20) + "\n\n"
	manyLines := strings.Repeat("data: "+strings.Repeat("m", 64<<10)+"\n", LongEvent/(64<<10)+8) + "\n"
	events := []string{"data: short\n\n", oneLine, ": ping\n\n", manyLines, "data: " + strings.Repeat("s", 100<<10) + "\n\n", oneLine}
	input := strings.Join(events, "")
	in := strings.NewReader(input)
	rd := NewReader(in, 2*LongEvent)
	defer rd.Release()

	var seen []string
	eventStart := 0 // input offset of the event being read
	rd.BeforeLongEvent(func() {
		// The reader's buffer (4 KiB) and one line may hold a little more.
		if ahead := len(input) - in.Len() - eventStart; ahead > LongEvent+128<<10 {
			t.Errorf("BeforeLongEvent ran with %d bytes of the event read, want LongEvent (%d) and a line at most", ahead, LongEvent)
		}
		seen = append(seen, "wait")
	})
	for i, want := range events {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if string(ev.Raw) != want {
			t.Fatalf("event %d: got %d bytes, want %d", i, len(ev.Raw), len(want))
		}
		seen = append(seen, fmt.Sprint(len(ev.Raw)))
		eventStart += len(ev.Raw)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
	n := func(s string) string { return fmt.Sprint(len(s)) }
	want := []string{n(events[0]), "wait", n(oneLine), n(events[2]), "wait", n(manyLines), n(events[4]), "wait", n(oneLine)}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("events (a length, or a wait):\n got %v\nwant %v", seen, want)
	}
}

// A line long by itself is gathered in pieces and copied once into a
// slice that fits it, its line end and blank line: grown by append, the
// event kept a quarter more than its size while the store held it. What
// the reader returns is the same either way, too long or not.
func TestReader_LongLineFits(t *testing.T) {
	body := strings.Repeat("F", LongEvent+3<<20+5)
	for _, tc := range []struct {
		name, in string
		max      int
		err      error
	}{
		{"lf", "data: " + body + "\n\n", 0, nil},
		{"crlf", "data: " + body + "\r\n\r\n", 0, nil},
		{"cr", "data: " + body + "\r\r", 0, nil},
		{"id after", "data: " + body + "\nid: 7\n\n", 0, nil},
		{"too long", "data: " + body + "\n\n", LongEvent + 1<<20, ErrTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(&oneByteLater{s: tc.in}, tc.max)
			defer rd.Release()
			ev, err := rd.Next()
			if !errors.Is(err, tc.err) {
				t.Fatalf("Next: %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				if rest := string(ev.Raw) + string(rd.Buffered()); !strings.HasPrefix(tc.in, rest) {
					t.Fatalf("too long: Raw and Buffered are not the stream's start")
				}
				return
			}
			if string(ev.Raw) != tc.in || string(ev.Data) != body {
				t.Fatalf("got %d bytes (%d of data), want %d (%d)", len(ev.Raw), len(ev.Data), len(tc.in), len(body))
			}
			if spare := cap(ev.Raw) - len(ev.Raw); spare > joinSlack {
				t.Errorf("the %d-byte event has room for %d more bytes, want %d at most", len(ev.Raw), spare, joinSlack)
			}
		})
	}
}

// oneByteLater reads s in reads of 4 KiB and one byte, so that the pieces
// a long line is gathered in never line up with what the reader reads.
type oneByteLater struct{ s string }

func (r *oneByteLater) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 4<<10+1)], r.s)
	r.s = r.s[n:]
	return n, nil
}
