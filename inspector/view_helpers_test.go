package inspector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// harness runs an App on tcell's simulation screen.
type harness struct {
	t   *testing.T
	sim tcell.SimulationScreen
	app *App
}

func startApp(t *testing.T, m *Model, src Source, opts Options, w, h int) *harness {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	opts.Screen = sim
	a := New(m, src, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("inspector did not stop")
		}
	})
	hs := &harness{t: t, sim: sim, app: a}
	hs.resize(w, h)
	return hs
}

// resize changes the terminal size as a real resize does.
func (h *harness) resize(w, ht int) {
	h.t.Helper()
	h.onUI(func() { h.sim.SetSize(w, ht) })
	_ = h.sim.PostEvent(tcell.NewEventResize(w, ht))
}

// onUI runs fn on the UI goroutine and waits; screen contents are read
// there so reads never race with drawing.
func (h *harness) onUI(fn func()) {
	done := make(chan struct{})
	// QueueUpdate waits for the update to run: called here, a UI goroutine
	// stuck in a loop would hang the test until go test's timeout instead
	// of failing it below.
	go h.app.app.QueueUpdate(func() { fn(); close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.t.Fatalf("UI goroutine stuck")
	}
}

// screen returns what is on the screen, one string per line.
func (h *harness) screen() string {
	var b strings.Builder
	h.onUI(func() {
		cells, w, _ := h.sim.GetContents()
		for i, c := range cells {
			if i > 0 && i%w == 0 {
				b.WriteByte('\n')
			}
			if len(c.Runes) == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(string(c.Runes))
			}
		}
	})
	return b.String()
}

// waitFor polls the screen until every want is on it and no notWant is.
func (h *harness) waitFor(timeout time.Duration, want []string, notWant ...string) string {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := h.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		for _, w := range notWant {
			ok = ok && !strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("screen lacks %q or shows %q within %s:\n%s", want, notWant, timeout, s)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

func (h *harness) keys(s string) {
	for _, r := range s {
		h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

func (h *harness) key(k tcell.Key) { h.sim.InjectKey(k, 0, tcell.ModNone) }

// selectedSeq reads the selected message on the UI goroutine.
func (h *harness) selected() Row {
	var r Row
	h.onUI(func() { r, _ = h.app.selected() })
	return r
}

// waitSelected waits until the row selected is seq (of the first
// session), failing the test after timeout. A step's want text may be on
// the screen before its key is handled (the detail pane of a response
// shows its request's line), so a check of the selection right after
// waitFor can read the row before the key.
func (h *harness) waitSelected(timeout time.Duration, seq uint64) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for r := h.selected(); r.Seq != seq; r = h.selected() {
		if time.Now().After(deadline) {
			h.t.Fatalf("selected s1 #%d after %v, want #%d", r.Seq, timeout, seq)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const (
	keyEnter = tcell.KeyEnter
	ctrlU    = tcell.KeyCtrlU
)

// keyStep is one step of a scripted session: type runes or press one
// special key, then wait until the screen shows every want and no notWant.
type keyStep struct {
	keys    string    // runes to type
	key     tcell.Key // or one special key
	want    []string
	notWant []string
}

// play runs steps in order, waiting up to timeout at each for its screen.
func (h *harness) play(timeout time.Duration, steps []keyStep) {
	for _, st := range steps {
		if st.keys != "" {
			h.keys(st.keys)
		} else {
			h.key(st.key)
		}
		if st.want != nil || st.notWant != nil {
			h.waitFor(timeout, st.want, st.notWant...)
		}
	}
}

// keyTest is a scripted session, then an optional check.
type keyTest struct {
	name  string
	steps []keyStep
	check func(t *testing.T, h *harness)
}

// runKeyTests plays each test on a fresh 80×24 inspector over a cassette
// of the one session given.
func runKeyTests(t *testing.T, session []frame, tests []keyTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src := openModel(t, writeCassette(t, session))
			h := startApp(t, m, src, Options{}, 80, 24)
			h.waitFor(wait, []string{"initialize"})
			h.play(wait, tt.steps)
			if tt.check != nil {
				tt.check(t, h)
			}
		})
	}
}
