package lint

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcptape/mcptape/store"
)

// Cassette checks the sessions of one cassette together, each with a
// Checker of its own, for callers that read a cassette in pieces or while
// it is recorded (the inspector). It adds what Tape adds to checking each
// session alone: a 2026-07-28 retry recorded in another session than the
// input_required result it answers is judged against that result.
//
// Over Streamable HTTP, mcpspy records 2026-07-28 traffic one session per
// connection, and a client may send a retry on another connection than
// its call. A retry that no input_required result of its own session
// answers is judged by Findings against the latest one for the same
// method, tool, prompt or resource and requestState that came before it
// in another session (by time; on a tie, the session with the later id
// and then the later seq), or found to retry nothing when there is none.
// What Findings knows of the other sessions is what their Checkers have
// been given so far, whatever the order: a session may be checked before
// or after the sessions its retries answer, and Findings asked again when
// more is known.
//
// Such a client sends its notifications/cancelled on a connection of its
// own too (go-sdk does), so the Checker of a session that is one
// connection of a client without an HTTP session leaves unjudged a
// client's cancellation that names no request of its session. Tape,
// which has every session, judges it against the client requests of the
// cassette's other such sessions of the same upstream: it names one sent
// before it (by time), or it is reported. Findings judges such
// cancellations only there: before every session is checked, a request
// may yet turn up.
//
// A Cassette and its Checkers are not safe for concurrent use.
type Cassette struct {
	opts     Options
	skip     map[string]bool
	sessions map[string]*cassetteSession
	asks     map[string][]*sharedAsk // by askKey
	// whole says every session has been checked (Tape): Findings then
	// judges the cancellations of a request in another session.
	whole bool
}

// cassetteSession is what one session's Checker gave its Cassette.
type cassetteSession struct {
	owner    *checker // the session's current checker; others are ignored
	upstream string
	keys     []string // the askKeys of its asks
	// retries holds, in seq order, its retries that no ask of its own
	// answers.
	retries []*pendingRetry
	// sent holds, in a session that is one connection of a client
	// without an HTTP session, when the client sent a request with each
	// id; cancels, in seq order, the client's cancellations that name no
	// request of the session.
	sent    map[string][]time.Time
	cancels []*pendingCancel
}

// pendingCancel is a client's notifications/cancelled that names a
// request of another session, if any.
type pendingCancel struct {
	seq uint64
	at  time.Time
	id  string // the requestId's JSON text, as written
	key string // id as requests are found by (idKey)
}

// sharedAsk is an input_required result as other sessions see it.
type sharedAsk struct {
	session string
	at      time.Time
	ask     *inputAsk
}

// pendingRetry is a retry kept for Findings; it holds copies of what it
// needs, not its frame.
type pendingRetry struct {
	seq              uint64
	at               time.Time
	method, key      string
	state, responses json.RawMessage
}

// NewCassette starts checking a cassette's sessions with opts.
func NewCassette(opts Options) *Cassette {
	t := &Cassette{opts: opts, skip: map[string]bool{}, sessions: map[string]*cassetteSession{}, asks: map[string][]*sharedAsk{}}
	for _, name := range opts.Skip {
		t.skip[name] = true
	}
	return t
}

// Checker starts checking the session with info as one of the cassette's,
// as NewChecker does. It takes the place of any earlier Checker of the
// same session, whose messages the cassette forgets, so that a session can
// be checked again from its first message; the earlier one must not be
// used after.
func (t *Cassette) Checker(info store.SessionInfo) *Checker {
	k := NewChecker(info, t.opts)
	t.forget(info.ID)
	t.sessions[info.ID] = &cassetteSession{owner: k.c, upstream: info.Upstream}
	k.c.cassette = t
	return k
}

// forget drops what the session's Checker gave.
func (t *Cassette) forget(session string) {
	s := t.sessions[session]
	if s == nil {
		return
	}
	for _, key := range s.keys {
		asks := slices.DeleteFunc(t.asks[key], func(a *sharedAsk) bool { return a.session == session })
		if len(asks) == 0 {
			delete(t.asks, key)
		} else {
			t.asks[key] = asks
		}
	}
	delete(t.sessions, session)
}

// current returns what c gives the cassette, nil when a later Checker of
// its session has taken its place.
func (t *Cassette) current(c *checker) *cassetteSession {
	if s := t.sessions[c.info.ID]; s != nil && s.owner == c {
		return s
	}
	return nil
}

// ask keeps an input_required result of c's session for the other
// sessions' retries.
func (t *Cassette) ask(c *checker, key string, at time.Time, ask *inputAsk) {
	s := t.current(c)
	if s == nil {
		return
	}
	if !slices.Contains(s.keys, key) {
		s.keys = append(s.keys, key)
	}
	t.asks[key] = append(t.asks[key], &sharedAsk{session: c.info.ID, at: at, ask: ask})
}

// retry keeps a retry of c's session that no ask of its own answers.
func (t *Cassette) retry(c *checker, r *pendingRetry) {
	if s := t.current(c); s != nil {
		s.retries = append(s.retries, r)
	}
}

// sent keeps the id (idKey) of a request the client sent in c's session,
// one connection of a client without an HTTP session.
func (t *Cassette) sent(c *checker, id string, at time.Time) {
	s := t.current(c)
	if s == nil {
		return
	}
	if s.sent == nil {
		s.sent = map[string][]time.Time{}
	}
	s.sent[id] = append(s.sent[id], at)
}

// cancel keeps a client's cancellation in c's session that names no
// request of its own.
func (t *Cassette) cancel(c *checker, p *pendingCancel) {
	if s := t.current(c); s != nil {
		s.cancels = append(s.cancels, p)
	}
}

// sentElsewhere says whether the client sent a request with id (idKey) in
// another session than session of the same upstream, not after at.
func (t *Cassette) sentElsewhere(session, upstream, id string, at time.Time) bool {
	for other, s := range t.sessions {
		if other == session || s.upstream != upstream {
			continue
		}
		for _, when := range s.sent[id] {
			if !when.After(at) {
				return true
			}
		}
	}
	return false
}

// Retries says how many of the session's retries answer no input_required
// result of their own session, so that Findings judges them against the
// other sessions'. A session with none needs no other session checked.
func (t *Cassette) Retries(session string) int {
	if s := t.sessions[session]; s != nil {
		return len(s.retries)
	}
	return 0
}

// Findings judges the session's retries that Retries counts against the
// other sessions' input_required results known so far, and returns what
// it finds, in seq order. They are not among the findings of the
// session's Checker: the session's findings, as Tape returns them, are
// the Checker's followed by these, sorted by seq, keeping that order
// among findings about the same message.
func (t *Cassette) Findings(session string) []Finding {
	s := t.sessions[session]
	if s == nil || len(s.retries) == 0 && (!t.whole || len(s.cancels) == 0) {
		return nil
	}
	var out []Finding
	report := func(rule string, seq, related uint64, format string, a ...any) {
		if f, ok := newFinding(session, t.skip, rule, seq, related, format, a...); ok {
			out = append(out, f)
		}
	}
	for _, r := range s.retries {
		a := t.latestAsk(session, r)
		if a == nil {
			retryOfNothing(report, r.seq, r.method, r.state)
			continue
		}
		judgeRetry(report, r.seq, a.ask.seq, a.session, a.ask, r.responses)
	}
	if t.whole {
		for _, p := range s.cancels {
			if !t.sentElsewhere(session, s.upstream, p.key, p.at) {
				report("cancel-unknown", p.seq, 0, "cancels request %s, which the client never sent, on this connection or another", p.id)
			}
		}
		slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return out
}

// latestAsk is the input_required result retry r of session answers: the
// latest by time, not after it, of another session (ties: the later
// session id, s10 after s9, then the later seq); nil when there is none.
func (t *Cassette) latestAsk(session string, r *pendingRetry) *sharedAsk {
	var best *sharedAsk
	for _, a := range t.asks[r.key] {
		if a.session == session || a.at.After(r.at) {
			continue
		}
		if best == nil || cmp.Or(a.at.Compare(best.at), compareIDs(a.session, best.session), cmp.Compare(a.ask.seq, best.ask.seq)) > 0 {
			best = a
		}
	}
	return best
}

// compareIDs orders session ids as mcpspy numbers them: s9 before s10.
func compareIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}

// withRetries merges a session's findings from its Checker with those
// Findings returns about its retries, as Findings says.
func withRetries(own, retries []Finding) []Finding {
	if len(retries) == 0 {
		return own
	}
	out := append(slices.Clip(own), retries...)
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}
