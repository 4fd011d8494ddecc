package inspector

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/mcptape/mcptape/store"
)

// pollLog is a Source that notes, for each Poll, when it started and how
// many new messages it found.
type pollLog struct {
	Source
	mu    sync.Mutex
	polls []loggedPoll
}

type loggedPoll struct {
	start time.Time
	msgs  int
}

func (p *pollLog) Poll(after Mark) (*Batch, error) {
	start := time.Now()
	b, err := p.Source.Poll(after)
	if err == nil {
		p.mu.Lock()
		p.polls = append(p.polls, loggedPoll{start, len(b.Msgs)})
		p.mu.Unlock()
	}
	return b, err
}

// foundBy counts the new messages found by the polls that started after
// from, up to and including the first that started after by; ok is false
// when no poll has started after by yet.
func (p *pollLog) foundBy(from, by time.Time) (n int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.polls {
		if q.start.After(from) {
			n += q.msgs
		}
		if q.start.After(by) {
			return n, true
		}
	}
	return n, false
}

// TestView_Follow appends with a store.Writer, which opens the file for
// each commit as a recorder in another process does, and checks that the
// new messages show while the selection and scroll stay. "Within a second
// of the commit" (#2) holds because the follower polls every 250 ms and
// the first poll after a commit finds it; both are checked, rather than a
// wall-clock time that a loaded machine can stretch.
func TestView_Follow(t *testing.T) {
	path := writeCassette(t, sampleSession)
	m, src := openModel(t, path)
	log := &pollLog{Source: src}
	h := startApp(t, m, log, Options{Follow: true}, 80, 24)
	if got := h.app.opts.PollInterval; got > time.Second/4 {
		t.Errorf("the follower polls every %v; new messages must show within 1 s", got)
	}
	h.waitFor(wait, []string{"13/13", "● follow"})
	h.keys("jj")
	h.waitFor(wait, []string{"s1 #3  →"})
	var off int
	h.onUI(func() { off, _ = h.app.table.GetOffset() })

	begun := time.Now()
	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: time.Now()})
	for i := 1; i <= 30; i++ {
		s.Append(store.C2S, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i), nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	committed := time.Now()
	h.waitFor(wait, []string{"43/43", "live"})
	// A poll that ran during the commit may have found them already, and
	// shown them before any poll began after it; by the first poll after
	// it, which the follower makes within its interval, all must have
	// been found.
	n, ok := log.foundBy(begun, committed)
	for deadline := time.Now().Add(wait); !ok && time.Now().Before(deadline); n, ok = log.foundBy(begun, committed) {
		time.Sleep(10 * time.Millisecond) // polling for the follower's next poll, not a wait for a result
	}
	if !ok || n != 30 {
		t.Errorf("by the first poll after the commit, %d new messages were found (polled since: %v); want all 30", n, ok)
	}
	if r := h.selected(); r.Session != "s1" || r.Seq != 3 {
		t.Errorf("selection moved to %s #%d", r.Session, r.Seq)
	}
	var off2 int
	h.onUI(func() { off2, _ = h.app.table.GetOffset() })
	if off2 != off {
		t.Errorf("scroll moved from %d to %d", off, off2)
	}
	h.waitFor(wait, []string{"s1 #3  →"})
}

// TestOpen_WhileRecording opens a cassette that a writer is committing to
// as fast as it can.
func TestOpen_WhileRecording(t *testing.T) {
	path := writeCassette(t, sampleSession)
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true, CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Append(store.S2C, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`, i), nil)
			if i%50 == 0 {
				_ = w.Flush()
			}
		}
	}()
	defer func() { close(stop); <-done; w.Close() }()
	for i := 0; i < 5; i++ {
		m, src, err := Open(path)
		if err != nil {
			t.Fatalf("open while recording: %v", err)
		}
		if m.Len() < 13 {
			t.Fatalf("only %d messages", m.Len())
		}
		b, err := src.Poll(m.After())
		if err != nil {
			t.Fatalf("poll while recording: %v", err)
		}
		if err := m.Apply(b, src); err != nil {
			t.Fatal(err)
		}
	}
}

// TestView_FollowDetailGainsPair: the detail pane of a request selected
// while it waits shows its answer as soon as follow reads it, with no key
// pressed (Wireshark's live capture updates the packet shown).
func TestView_FollowDetailGainsPair(t *testing.T) {
	path := writeCassette(t, sampleSession)
	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: time.Now()})
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"slow"}}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	h := startApp(t, m, src, Options{Follow: true}, 100, 40)
	h.waitFor(wait, []string{"14/14", "● follow"})
	h.key(tcell.KeyEnd)
	h.waitFor(wait, []string{"s2 #1  →  request"}, "paired response")

	s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":77,"result":{"content":[{"type":"text","text":"finally"}]}}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h.waitFor(wait, []string{"15/15", "paired response s2 #2 below", "paired response: s2 #2"})
	if r := h.selected(); r.Session != "s2" || r.Seq != 1 {
		t.Errorf("selection moved to %s #%d", r.Session, r.Seq)
	}
}

// liveSession starts a session in the cassette at path as a recorder in
// another process would: a store.Writer that opens the file per commit.
// The test's Cleanup closes it.
func liveSession(t *testing.T, path string, info store.SessionInfo) (*store.Writer, *store.Session) {
	t.Helper()
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	s, err := w.NewSession(info)
	if err != nil {
		t.Fatal(err)
	}
	return w, s
}

// TestView_FollowLateFindings: under a lint filter, a request that turns
// out unanswered only when its session ends is not slipped into the
// table above the selection; the status line says so, and applying the
// filter again shows it.
func TestView_FollowLateFindings(t *testing.T) {
	path := writeCassette(t, sampleSession)
	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: time.Now()})
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`), nil)
	s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`), nil)
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"never"}}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	h := startApp(t, m, src, Options{Follow: true}, 120, 30)
	h.waitFor(wait, []string{"17/17", "● follow"})
	h.play(wait, []keyStep{{keys: "f"}, {keys: "lint:unanswered session:s2"}, {key: tcell.KeyEnter, want: []string{"filter: lint:unanswered session:s2", "0/17"}}})

	if err := s.End(store.EndInfo{Reason: store.EndEOF}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h.waitFor(wait, []string{"lint: 1 finding new on messages the filter had passed over", "0/17"})
	h.play(wait, []keyStep{{keys: "f"}, {key: tcell.KeyEnter, want: []string{"1/17", "tools/call never"}}})
}

// pollGate is a Source whose Poll, once armed, says it has started and
// then waits to be let go: a follower caught mid-poll.
type pollGate struct {
	Source
	armed   chan struct{} // closed to arm
	entered chan struct{} // closed when an armed Poll starts
	release chan struct{} // closed to let it return
	once    sync.Once
}

func (g *pollGate) Poll(after Mark) (*Batch, error) {
	select {
	case <-g.armed:
		g.once.Do(func() { close(g.entered) })
		<-g.release
	default:
	}
	return g.Source.Poll(after)
}

// Quitting while the follower is handing over a batch ends Run. tview's
// QueueUpdateDraw waits forever once the application has stopped, and a
// follower that called it then kept Run (and mcpspy inspect --follow)
// from returning.
func TestView_QuitWhileFollowerPosts(t *testing.T) {
	path := writeCassette(t, sampleSession)
	m, src := openModel(t, path)
	gate := &pollGate{Source: src, armed: make(chan struct{}), entered: make(chan struct{}), release: make(chan struct{})}
	sim := tcell.NewSimulationScreen("UTF-8")
	a := New(m, gate, Options{Follow: true, Screen: sim, PollInterval: time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()

	close(gate.armed)
	<-gate.entered
	sim.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	// Give the quit time to stop the application before the batch is
	// posted: the order this test is about. (A sleep to set up the race,
	// not to synchronise: Run must return whichever way it falls.)
	time.Sleep(100 * time.Millisecond)
	close(gate.release)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after q: the follower is stuck handing over its batch")
	}
}
