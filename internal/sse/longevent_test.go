package sse

import (
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
