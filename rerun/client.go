package rerun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// A 2026-07-28 client over Streamable HTTP has no session: mcpspy records
// each of its connections as a session of its own, so one client's
// subscriptions/listen stream, its calls and its notifications/cancelled
// may lie in three sessions. Rerun one after another, the listen stream
// would open after the calls whose notifications it carried, and close
// before them. RunClient reruns such sessions together, one connection
// each, at once, and keeps the recorded order across them.

// Clients splits sessions into those to rerun together with RunClient:
// the sessions of a sessionless 2026-07-28 HTTP client whose connections
// were open at the same time (overlapping from start to end) go
// together, in order of start; every other session goes alone. Groups
// are in the order of their first session in sessions.
func Clients(sessions []*store.TapeSession) [][]*store.TapeSession {
	var out [][]*store.TapeSession
	var stateless []*store.TapeSession
	for _, s := range sessions {
		if Sessionless(s) {
			stateless = append(stateless, s)
		} else {
			out = append(out, []*store.TapeSession{s})
		}
	}
	slices.SortStableFunc(stateless, func(a, b *store.TapeSession) int { return a.Info.Start.Compare(b.Info.Start) })
	var end time.Time // the group's latest end so far; zero: still open
	for i, s := range stateless {
		if i == 0 || (!end.IsZero() && s.Info.Start.After(end)) {
			out = append(out, nil)
			end = s.Info.Start
		}
		out[len(out)-1] = append(out[len(out)-1], s)
		switch {
		case s.Info.End == nil || s.Info.End.Time.IsZero():
			end = time.Time{}
		case !end.IsZero() && s.Info.End.Time.After(end):
			end = s.Info.End.Time
		}
	}
	first := map[*store.TapeSession]int{}
	for i, s := range sessions {
		first[s] = i
	}
	slices.SortStableFunc(out, func(a, b []*store.TapeSession) int {
		return cmp.Compare(slices.Min(indexes(a, first)), slices.Min(indexes(b, first)))
	})
	return out
}

func indexes(g []*store.TapeSession, at map[*store.TapeSession]int) []int {
	out := make([]int, len(g))
	for i, s := range g {
		out[i] = at[s]
	}
	return out
}

// Sessionless says whether s is a connection of a 2026-07-28 client over
// Streamable HTTP: every POST carries MCP-Protocol-Version 2026-07-28 or
// later, and no message an Mcp-Session-Id.
func Sessionless(s *store.TapeSession) bool {
	if s.Info.Transport != store.TransportHTTP {
		return false
	}
	posts := 0
	for _, m := range s.Messages {
		if m.HTTP == nil {
			return false
		}
		if m.HTTP.RequestHeader.Get("Mcp-Session-Id") != "" || m.HTTP.ResponseHeader.Get("Mcp-Session-Id") != "" {
			return false
		}
		if m.Dir == store.C2S && m.HTTP.Method == http.MethodPost {
			if m.HTTP.RequestHeader.Get("MCP-Protocol-Version") < "2026-07-28" {
				return false
			}
			posts++
		}
	}
	return posts > 0
}

// RunClient reruns the sessions of one sessionless client (Clients), each
// on a connection of its own, all at once. Each frame is sent once every
// frame recorded before it on the other connections has been sent, and
// every server notification recorded before it on the other connections
// has come (at most Options.Timeout; a notification the server no longer
// sends is waited for once per connection and method). So a listen stream
// opened before a call in the recording is open before it in the rerun,
// and a cancel that followed a notification on another connection
// follows it again. Before the connections close, the notifications
// recorded after the last frame are waited for the same way.
//
// Each Result's Unheard names the server notifications its session's
// recording has more of than the rerun. With one session RunClient is
// Run, but for Unheard. The error is Run's, for each session that met
// one; the Results are there whenever the connections could be made.
func RunClient(ctx context.Context, recorded []*store.TapeSession, opts Options) ([]*Result, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	g := newGate(recorded)
	drivers := make([]*driver, len(recorded))
	for i, s := range recorded {
		d, err := start(ctx, s, opts, g, i)
		if err != nil {
			for _, d := range drivers[:i] {
				d.finish()
			}
			return nil, fmt.Errorf("%s: %w", s.Info.ID, err)
		}
		drivers[i] = d
	}
	errs := make([]error, len(drivers))
	var wg sync.WaitGroup
	for i, d := range drivers {
		wg.Go(func() {
			if err := d.run(ctx, opts.Timeout); err != nil {
				errs[i] = fmt.Errorf("%s: %w", recorded[i].Info.ID, err)
			}
		})
	}
	wg.Wait()
	g.wait(ctx, math.MaxInt, -1, opts.Timeout)
	out := make([]*Result, len(drivers))
	for i, d := range drivers {
		out[i] = d.finish()
		out[i].Unheard = unheard(recorded[i], &out[i].Session)
	}
	return out, errors.Join(errs...)
}

// unheard compares the server notifications of a recorded session and its
// rerun, method by method, and names those the rerun has fewer of.
func unheard(recorded, rerun *store.TapeSession) []string {
	counts := func(s *store.TapeSession) (map[string]int, []string) {
		n := map[string]int{}
		var order []string
		for _, m := range s.Messages {
			if sum := jsonrpc.Classify(m.Frame); m.Dir == store.S2C && sum.Kind == jsonrpc.Notification {
				if n[sum.Method] == 0 {
					order = append(order, sum.Method)
				}
				n[sum.Method]++
			}
		}
		return n, order
	}
	was, order := counts(recorded)
	now, _ := counts(rerun)
	var out []string
	for _, method := range order {
		if now[method] < was[method] {
			out = append(out, fmt.Sprintf("%s: %d in the recording, %d in the rerun", method, was[method], now[method]))
		}
	}
	return out
}

// event is one recorded frame that orders a group's connections: a
// client frame to send, or a server notification to hear.
type event struct {
	conn   int // the connection it is on
	step   bool
	method string // a notification's
	done   bool
}

// gate holds a group's events in recorded order, across its connections.
type gate struct {
	mu      sync.Mutex
	events  []event
	low     int                 // events before it are all done
	changed chan struct{}       // closed, and replaced, at each change
	heardAt map[[2]string][]int // connection and method → its notification events, in order
	ranks   [][]int             // connection → its steps' events, in step order
}

// newGate merges the recorded sessions' client frames and server
// notifications by recorded time, each session's in its own order.
func newGate(recorded []*store.TapeSession) *gate {
	g := &gate{changed: make(chan struct{}), heardAt: map[[2]string][]int{},
		ranks: make([][]int, len(recorded))}
	next := make([]int, len(recorded)) // connection → its next message
	for {
		pick := -1
		for c, s := range recorded {
			if next[c] < len(s.Messages) && (pick < 0 || s.Messages[next[c]].Time.Before(recorded[pick].Messages[next[pick]].Time)) {
				pick = c
			}
		}
		if pick < 0 {
			break
		}
		m := recorded[pick].Messages[next[pick]]
		next[pick]++
		sum := jsonrpc.Classify(m.Frame)
		switch {
		case m.Dir == store.C2S && sum.Kind != jsonrpc.Response && sum.Kind != jsonrpc.Error: // a step, as planOf takes them
			g.ranks[pick] = append(g.ranks[pick], len(g.events))
			g.events = append(g.events, event{conn: pick, step: true})
		case m.Dir == store.S2C && sum.Kind == jsonrpc.Notification:
			k := [2]string{fmt.Sprint(pick), sum.Method}
			g.heardAt[k] = append(g.heardAt[k], len(g.events))
			g.events = append(g.events, event{conn: pick, method: sum.Method})
		}
	}
	return g
}

// wait returns once every event before rank is done, but for the
// notifications on connection conn itself (its own answers are its
// driver's to wait for). A notification is waited for at most timeout;
// then it, and the later ones of its connection and method, are given
// up on. A nil gate (one session) never waits.
func (g *gate) wait(ctx context.Context, rank, conn int, timeout time.Duration) {
	if g == nil {
		return
	}
	blocking, deadline := -1, time.Time{}
	for {
		g.mu.Lock()
		for g.low < len(g.events) && g.events[g.low].done {
			g.low++
		}
		next := -1
		for i := g.low; i < rank && i < len(g.events); i++ {
			if e := g.events[i]; !e.done && (e.step || e.conn != conn) {
				next = i
				break
			}
		}
		changed := g.changed
		g.mu.Unlock()
		if next < 0 {
			return
		}
		if next != blocking {
			blocking, deadline = next, time.Now().Add(timeout)
		}
		var expired <-chan time.Time
		var t *time.Timer
		if !g.events[next].step { // a step is its driver's to send, soon or never
			t = time.NewTimer(time.Until(deadline))
			expired = t.C
		}
		select {
		case <-changed:
		case <-expired:
			g.mu.Lock()
			e := g.events[next]
			k := [2]string{fmt.Sprint(e.conn), e.method}
			for _, i := range g.heardAt[k] {
				g.events[i].done = true
			}
			g.changeLocked()
			g.mu.Unlock()
		case <-ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// changeLocked wakes the waiters. Called with mu held.
func (g *gate) changeLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// sent marks the step of rank as done: sent, or never to be.
func (g *gate) sent(ranks ...int) {
	if g == nil || len(ranks) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range ranks {
		g.events[r].done = true
	}
	g.changeLocked()
}

// heard marks the next recorded notification of method on conn as done.
func (g *gate) heard(conn int, method string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, i := range g.heardAt[[2]string{fmt.Sprint(conn), method}] {
		if !g.events[i].done {
			g.events[i].done = true
			g.changeLocked()
			return
		}
	}
}
