package recorder

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/frame"
	"github.com/mcptape/mcptape/store"
)

// waitingTap notes each frame appended and each WaitBacklog, in order.
type waitingTap struct{ events []string }

func (w *waitingTap) Append(dir store.Dir, t time.Time, f []byte, meta *store.HTTPMeta) uint64 {
	w.events = append(w.events, fmt.Sprint(len(f)))
	return uint64(len(w.events))
}

func (w *waitingTap) WaitBacklog() { w.events = append(w.events, "wait") }

// The stdio pump waits for its Tap's backlog before it reads on into a
// long line, after the line before is tapped and forwarded, and not for
// short lines.
func TestPump_WaitsForTheBacklogBeforeALongLine(t *testing.T) {
	long := strings.Repeat("L", frame.LongLine+1<<20)
	in := "short\n" + long + "\n" + "x\n" + long + "\n"
	tap := &waitingTap{}
	var out strings.Builder
	if !pump(strings.NewReader(in), writeLine(&out), store.S2C, tap) {
		t.Fatal("pump says the writer failed")
	}
	if out.String() != in {
		t.Errorf("forwarded %d bytes, not the %d read", out.Len(), len(in))
	}
	n := fmt.Sprint(len(long))
	want := []string{"5", "wait", n, "1", "wait", n}
	if strings.Join(tap.events, " ") != strings.Join(want, " ") {
		t.Errorf("tap saw (a frame's length, or a wait):\n got %v\nwant %v", tap.events, want)
	}
}
