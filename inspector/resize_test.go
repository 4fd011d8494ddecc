package inspector

import (
	"strings"
	"testing"
	"time"
)

// TestView_ResizeKeepsSelectionOnScreen: after the terminal shrinks, the
// selected row is still in the table, with no key pressed.
func TestView_ResizeKeepsSelectionOnScreen(t *testing.T) {
	m, src := openModel(t, writeCassette(t, manyPings(100)))
	h := startApp(t, m, src, Options{}, 80, 40)
	h.waitFor(wait, []string{"ping"})
	h.keys("G")
	h.waitFor(wait, []string{"s1 #100  →"})
	if !tableShowsSeq(h.screen(), "100") {
		t.Fatalf("row 100 not in the table after G:\n%s", h.screen())
	}
	for _, ht := range []int{16, 12} {
		h.resize(80, ht)
		deadline := time.Now().Add(wait)
		for s := h.screen(); !(len(strings.Split(s, "\n")) == ht && tableShowsSeq(s, "100")); s = h.screen() {
			if time.Now().After(deadline) {
				t.Fatalf("at 80×%d the selected row 100 is off the table:\n%s", ht, s)
			}
			time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
		}
	}
	if r := h.selected(); r.Seq != 100 {
		t.Errorf("selection moved to %d", r.Seq)
	}
}

// tableShowsSeq says whether a message table line with that seq is on
// the screen s.
func tableShowsSeq(s, seq string) bool {
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && (f[0] == "!" || f[0] == "i") { // lint's mark
			f = f[1:]
		}
		if len(f) > 1 && f[0] == seq && strings.Contains(l, "ping") {
			return true
		}
	}
	return false
}
