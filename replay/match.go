package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/suggest"
)

// matcher is a parsed --match mode.
type matcher struct {
	strict bool
	// ignore lists methods matched on the method alone; ignoreAll: every
	// method.
	ignore    map[string]bool
	ignoreAll bool
	ignored   []string // the methods of ignore, in the order given
	timing    bool     // --timing recorded
	// fn is Options.MatchFunc, asked after a miss (matchfunc.go); warnf
	// says when it panics.
	fn    MatchFunc
	warnf func(format string, a ...any)
}

// Match modes, as --match spells them.
const (
	MatchDefault      = "default"
	MatchStrict       = "strict"
	MatchIgnoreParams = "ignore-params"
)

// parseMatch reads "default", "strict", "ignore-params" or
// "ignore-params=METHOD[,METHOD...]".
func parseMatch(mode string) (matcher, error) {
	name, list, hasList := strings.Cut(mode, "=")
	switch {
	case mode == "" || mode == MatchDefault:
		return matcher{}, nil
	case mode == MatchStrict:
		return matcher{strict: true}, nil
	case name == MatchIgnoreParams && !hasList:
		return matcher{ignoreAll: true}, nil
	case name == MatchIgnoreParams:
		m := matcher{ignore: map[string]bool{}}
		for _, meth := range strings.Split(list, ",") {
			if meth = strings.TrimSpace(meth); meth == "" {
				return m, fmt.Errorf("match mode %q: empty method name in the list", mode)
			}
			if !m.ignore[meth] {
				m.ignored = append(m.ignored, meth)
			}
			m.ignore[meth] = true
		}
		return m, nil
	}
	return matcher{}, fmt.Errorf("unknown match mode %q (want default, strict, ignore-params or ignore-params=METHOD,...)%s", mode,
		suggest.DidYouMean(name, []string{MatchDefault, MatchStrict, MatchIgnoreParams}, "%s"))
}

func (m *matcher) ignores(method string) bool { return m.ignoreAll || m.ignore[method] }

// requestMethods are the methods of the requests the cassette recorded,
// which --match ignore-params=METHOD can apply to.
func (c *Cassette) requestMethods() []string { return slices.Collect(maps.Keys(c.byMethod)) }

// checkIgnored refuses an ignore-params=METHOD,... list that names a
// method no cassette among sources recorded a request of: the mode would
// change nothing for it, and a typo (tools/lst) would pass unseen. A
// script does not count, as --match does not apply to scripts. With a
// source that answers any method (AnyMethod: a real server behind
// mcpmock) such a method is legitimate, only perhaps mistyped: warn then.
func (m *matcher) checkIgnored(mode string, sources []Source, warnf func(format string, a ...any)) error {
	if len(m.ignored) == 0 {
		return nil
	}
	recorded := map[string]bool{}
	anyMethod := false
	for _, src := range sources {
		if c, ok := src.(interface{ requestMethods() []string }); ok {
			for _, meth := range c.requestMethods() {
				recorded[meth] = true
			}
		}
		if a, ok := src.(AnyMethod); ok && a.AnswersAnyMethod() {
			anyMethod = true
		}
	}
	known := slices.Sorted(maps.Keys(recorded))
	var unknown []string
	for _, meth := range m.ignored {
		if recorded[meth] {
			continue
		}
		if near := suggest.Nearest(meth, known); near != "" {
			meth += " (did you mean " + near + "?)"
		}
		unknown = append(unknown, meth)
	}
	if len(unknown) == 0 {
		return nil
	}
	what := "no cassette recorded a request of method " + strings.Join(unknown, " or ")
	switch {
	case anyMethod:
		warnf("--match %s: %s yet; the fallback server answers it until one does", mode, what)
		return nil
	case len(known) == 0:
		return fmt.Errorf("match mode %q: %s: --match applies to cassettes, and none recorded a request", mode, what)
	}
	return fmt.Errorf("match mode %q: %s; recorded: %s", mode, what, strings.Join(known, ", "))
}

// checkApplies refuses a match mode, recorded timing or MatchFunc when
// no source is a cassette: they change only how recordings answer, and a
// script says in its own when and delay what matches and how long an
// answer takes. Accepted, they would pass unseen, and a user who asked
// for strict matching of a script would believe it had it. With a source
// that answers any method (a fallback server), what it answers is
// recorded for the next replay, where they apply.
func checkApplies(opts Options, sources []Source) error {
	for _, src := range sources {
		if _, ok := src.(interface{ setMatch(matcher) }); ok {
			return nil
		}
		if a, ok := src.(AnyMethod); ok && a.AnswersAnyMethod() {
			return nil
		}
	}
	const none = "applies to cassettes (.db, .jsonl, .har), and no source is one"
	switch {
	case opts.Match != "" && opts.Match != MatchDefault:
		return fmt.Errorf("match mode %q: --match %s: a script's when says what matches", opts.Match, none)
	case opts.Timing == "recorded":
		return fmt.Errorf("timing %q: --timing %s: a script's delay says how long an answer takes", opts.Timing, none)
	case opts.MatchFunc != nil:
		return fmt.Errorf("a MatchFunc %s: a script's when says what matches", none)
	}
	return nil
}

// cassetteSession is one live client's cursor over a cassette. Each live
// session replays the cassette from the start: the n-th identical request
// of a session gets the n-th recorded answer.
type cassetteSession struct {
	c  *Cassette
	mu sync.Mutex
	// How many occurrences of a key this session used: of a request's
	// match key, of a method (ignore-params), of a notification's key. A
	// key is named by its first occurrence.
	next       map[*interaction]int
	nextMethod map[string]int
	nextNote   map[*interaction]int
	pos        int // strict: index of the next expected request
	// taskAt is how far each recorded task has got in what this session
	// was given: the recorded seq of the latest answer about it (tasks.go).
	taskAt map[taskKey]uint64
	// guess is the number (in the cassette's slab) of the interaction
	// after the one matched last: see keyIndex.findNext. Only a hint, so
	// not under mu.
	guess atomic.Uint32
	// handshake: the session's client speaks the handshake era
	// (acrossEras).
	handshake atomic.Bool
}

// keyBuf is room for a typical match key on the stack: answering a
// request allocates nothing here.
const keyBuf = 512

// Answer implements SessionSource.
func (s *cassetteSession) Answer(ctx context.Context, peer Peer, req *Request) (Reply, bool) {
	p, ok := s.Prepare(req)
	if !ok {
		return Reply{}, false
	}
	if p.Play != nil {
		return p.Play(ctx, peer, req), true
	}
	return p.Reply, true
}

func (s *cassetteSession) Prepare(req *Request) (*Prepared, bool) {
	p, ok := s.prepare(req)
	if !ok && isPlainCallOf2026(req) {
		p, ok = s.prepare(asTaskCall(req))
	}
	if !ok {
		// Last: the user's MatchFunc loosens what no exact way answered.
		p, ok = s.prepareByFunc(req)
	}
	switch {
	case ok && req.Method == "initialize":
		p = negotiated(p, req)
	case !ok && req.Method == "subscriptions/listen":
		// The engine acknowledges a listen whose filter none recorded
		// (listen.go), and sends it what the recording sent on any: the
		// recorded listens were of use, not unused.
		for _, it := range s.c.byMethod[req.Method] {
			markUsed(it)
		}
	}
	return p, ok
}

func (s *cassetteSession) prepare(req *Request) (*Prepared, bool) {
	c := s.c
	var buf [keyBuf]byte
	dst := buf[:0]
	if n := len(req.Method) + 1 + len(req.Params); n > keyBuf {
		// Room for the key at once: its canonical params are about as
		// long as the params, and growing a buffer to a big request's
		// size, a quarter at a time, would leave several times its size
		// behind as garbage.
		dst = make([]byte, 0, n)
	}
	key, _, valid := appendKey(dst, req.Method, req.Params)
	if !valid {
		return nil, false
	}
	if len(c.ignore) > 0 {
		// A copy: handing buf itself to the scanner would move it to the
		// heap for every request, ignored members or not.
		key = blankIgnored(bytes.Clone(key), req.Method, c.ignore)
	}
	if req.ID == nil {
		return s.prepareNote(key)
	}
	ignores := c.match.ignores(req.Method)
	var (
		first *interaction   // the key's first occurrence, or
		byMet []*interaction // with ignore-params, the method's
	)
	if ignores {
		if byMet = c.byMethod[req.Method]; len(byMet) == 0 {
			return nil, false
		}
	} else {
		guess := s.guess.Load()
		if first = c.byKey.findNext(key, guess); first == nil {
			// A miss: perhaps the recording blanked some of the params.
			if !c.redacted.keys(req, c.ignore, func(k []byte) bool {
				first, key = c.byKey.findNext(k, guess), k
				return first != nil
			}) {
				return nil, false
			}
		}
		if !c.match.strict && first.dup == 0 {
			// Recorded once: no cursor to keep, so no lock.
			p := s.forEra(req, first, s.planFor(req, first))
			if p == nil {
				return nil, false
			}
			markUsed(first)
			s.guess.Store(first.n + 1)
			return p, true
		}
	}
	s.mu.Lock()
	var it *interaction
	ofEra := false // it is of the occurrences recorded in req's era
	switch {
	case c.match.strict:
		s.pos = c.skipPings(s.pos)
		if s.pos >= len(c.reqs) {
			s.mu.Unlock()
			return nil, false
		}
		it = c.reqs[s.pos]
		if it.method != req.Method || (!ignores && !bytes.Equal(it.key, key)) {
			s.mu.Unlock()
			return nil, false
		}
		s.pos++
	case ignores:
		it = byMet[nextOf(&s.nextMethod, req.Method, len(byMet))]
	case first.dup == 0:
		it = first // first and last: no cursor to keep
	default:
		all := c.byKey.occurrences(first)
		if same := c.ofEra(first, req); same != nil {
			all, ofEra = same, true
		}
		it = all[nextOf(&s.next, first, len(all))]
		for it.refused() && !c.serveRefusal(it) && s.next[first] < len(all) {
			it = all[nextOf(&s.next, first, len(all))]
		}
	}
	s.mu.Unlock()
	if !ignores {
		s.guess.Store(it.n + 1)
	}
	switch {
	case c.match.strict:
		markUsed(it)
	case ignores:
		markUsed(c.claimMethod(req.Method, byMet))
	case ofEra:
		claimUnused(c.ofEra(first, req))
	case first.dup != 0:
		markUsed(c.byKey.claim(first))
	default:
		markUsed(it)
	}
	if p := s.forEra(req, it, s.planFor(req, it)); p != nil {
		return p, true
	}
	return nil, false
}

// A cassette may hold sessions of both eras: mcpspy records every
// session into one file, and the TypeScript SDK v2 client speaks the
// handshake era or 2026-07-28 as its caller chooses. A request the
// cassette recorded in both is answered from the occurrences recorded in
// the live request's era: the handshake-era answer lacks the resultType
// a 2026-07-28 client requires (the TypeScript SDK v2 client refuses it),
// and a 2026-07-28 answer goes to a handshake-era client only pruned
// (acrossEras), where a faithful one was recorded. A request recorded in
// one era alone is answered as before, across eras.

// eraSplit is the occurrences of a key, split by the era of the session
// that recorded each; both nil when the key was recorded in one era only.
type eraSplit struct{ handshake, stateless []*interaction }

// ofEra returns the occurrences of first's key (recorded more than once)
// recorded in the era of req, when the cassette recorded the key in both
// eras; nil when it did not.
func (c *Cassette) ofEra(first *interaction, req *Request) []*interaction {
	if c.stateless == nil {
		return nil // the common case costs nothing
	}
	p := &c.byKey.byEra[first.dup-1]
	split := p.Load()
	if split == nil {
		var h, s []*interaction
		for _, it := range c.byKey.dups[first.dup-1] {
			if c.stateless[it.sess] {
				s = append(s, it)
			} else {
				h = append(h, it)
			}
		}
		split = &eraSplit{}
		if len(h) > 0 && len(s) > 0 {
			split.handshake, split.stateless = h, s
		}
		p.Store(split) // sessions that race store equal splits
	}
	if statelessMeta(req.Params) {
		return split.stateless
	}
	return split.handshake
}

// claimUnused marks used the first of some occurrences that no live
// request used yet, as keyIndex.claim does for all of a key's
// occurrences: N live requests of one era use up N recorded in it.
func claimUnused(some []*interaction) {
	for _, it := range some {
		if it.used.CompareAndSwap(false, true) {
			return
		}
	}
}

// planFor is plan, through planTask for an answer about a task, or
// planTaskOutcome for a call made as a task answered to a 2026-07-28
// client (tasks_plain.go): nil when there is no answer for it.
func (s *cassetteSession) planFor(req *Request, it *interaction) *Prepared {
	if ref, ok := s.c.tasks.refs[it]; ok {
		if taskPresenceOnly(it.method) && statelessMeta(req.Params) {
			return s.planTaskOutcome(it, ref)
		}
		return s.planTask(it, ref)
	}
	return s.plan(it)
}

// refused says whether it replays a refusal: a bare HTTP status, or an
// expired session (not an error answered with a status: an answer).
func (it *interaction) refused() bool { return it.prep.Reply.refuses() }

// serveRefusal says whether refusal it may be given to a live session:
// once per replay, across sessions. A recorded refusal happened once; a
// client that reconnects after it (as it must after a 404 for its
// session) goes on to what the recording has next for the same request,
// where a session starting from the first occurrence would be refused
// again, and again.
func (c *Cassette) serveRefusal(it *interaction) bool {
	c.refusalsMu.Lock()
	defer c.refusalsMu.Unlock()
	if c.refusalsServed[it] {
		return false
	}
	if c.refusalsServed == nil {
		c.refusalsServed = map[*interaction]bool{}
	}
	c.refusalsServed[it] = true
	return true
}

// skipPings returns the index of the first recorded request from pos on
// that strict order counts. A live ping never reaches the cassette (the
// engine answers it), so a recorded one must not hold up the order.
func (c *Cassette) skipPings(pos int) int {
	for pos < len(c.reqs) && c.reqs[pos].method == "ping" {
		pos++
	}
	return pos
}

// markUsed notes it for Unused. It reads first: a replay asks most
// requests once, but an atomic write waits for every read before it.
func markUsed(it *interaction) {
	if !it.used.Load() {
		it.used.Store(true)
	}
}

// nextOf takes the next of n occurrences of k; once they ran out, the last
// one again.
func nextOf[K comparable](next *map[K]int, k K, n int) int {
	if *next == nil {
		*next = map[K]int{}
	}
	i := (*next)[k]
	if i < n-1 {
		(*next)[k] = i + 1
		return i
	}
	(*next)[k] = n
	return n - 1
}

// noAfter is the answer to a notification whose recorded traffic was
// already replayed.
var noAfter Prepared

func (s *cassetteSession) prepareNote(key []byte) (*Prepared, bool) {
	notes := s.c.notes
	first := notes.find(notes.hash(key), key)
	if first == nil {
		return nil, false
	}
	all := notes.occurrences(first)
	if all == nil {
		all = []*interaction{first}
	}
	s.mu.Lock()
	if s.nextNote == nil {
		s.nextNote = map[*interaction]int{}
	}
	n := s.nextNote[first]
	for n < len(all) && all[n].refused() && !s.c.serveRefusal(all[n]) {
		n++ // a refusal another session was given: what came after it
	}
	s.nextNote[first] = min(n+1, len(all))
	s.mu.Unlock()
	if n >= len(all) {
		return &noAfter, true // after-traffic is replayed once
	}
	it := all[n]
	markUsed(it)
	return s.asRecorded(it), true
}

// plan turns an interaction into a prepared answer: the one built at load,
// unless answering takes time or asks the client for input (mrtr.go).
func (s *cassetteSession) plan(it *interaction) *Prepared {
	p := s.planRecorded(it)
	if it.asks {
		return s.askAcrossEras(p)
	}
	return p
}

// planRecorded is the recorded answer, played with the recorded timing
// and the traffic that went on during the call.
func (s *cassetteSession) planRecorded(it *interaction) *Prepared {
	timing := s.c.match.timing
	if !it.plays && (!timing || !it.timed) {
		return s.asRecorded(it)
	}
	r := it.prep.Reply
	p := &Prepared{Reply: r, SSE: it.prep.SSE}
	p.Play = func(ctx context.Context, peer Peer, req *Request) Reply {
		start := time.Now()
		live := req.ProgressToken()
		sentProgress := false
		var clientTasks clientTaskIDs
		down := s.acrossEras(it)
		notify := func(method string, params json.RawMessage) {
			if down {
				params = handshakeParams(params)
			}
			_ = peer.Notify(method, params)
		}
		for _, st := range it.during {
			if timing && !sleepUntil(ctx, start.Add(st.at)) {
				return Reply{NoReply: true}
			}
			if ctx.Err() != nil {
				return Reply{NoReply: true}
			}
			switch {
			case st.progress:
				if live == nil {
					continue // the live client did not ask for progress
				}
				notify(st.out.Method, withMember(st.out.Params, "progressToken", live))
				sentProgress = true
			case st.out.Request:
				params := clientTasks.rekey(st.out.Params)
				if clientTasks.skips(st.out.Method, params) {
					continue
				}
				if st.clientTask != "" {
					params = asTheClientTakes(peer, st.out.Method, params)
				}
				answer, err := peer.Call(ctx, st.out.Method, params)
				if st.clientTask != "" {
					clientTasks.learn(st.clientTask, answer, err)
				}
			default:
				notify(st.out.Method, st.out.Params)
			}
		}
		if timing && !sleepUntil(ctx, start.Add(it.replyAt)) {
			return Reply{NoReply: true}
		}
		if sentProgress {
			ProgressBarrier(ctx, peer)
		}
		if down {
			return handshakeReply(r)
		}
		return r
	}
	return p
}

// barrierTimeout bounds the wait for the client's answer to the progress
// barrier's ping.
const barrierTimeout = time.Second

// ProgressBarrier pings a handshake-era client and waits for its answer,
// at most a second, or until ctx ends. A source that has sent progress
// for a request calls it before the reply. The TypeScript SDK handles
// notifications in a microtask but responses at once, and forgets a
// request's progress handler with its response: progress read in the
// same chunk as the response is dropped ("unknown token"), which a loaded
// machine makes likely even with a delay in between. The client answers
// ping only after it has run the handlers of what it read before, so the
// progress is seen.
//
// A 2026-07-28 request is never held up so: that era has no ping, and a
// server sends no requests of its own during a call. Nor, in a Server's
// session, once the client let a barrier ping go unanswered for a second
// (it does not answer ping, or is stalled), until that answer comes late:
// a client that never answers pays the second once, with a warning, not
// on every call.
func ProgressBarrier(ctx context.Context, p Peer) {
	if v := p.ProtocolVersion(); v >= statelessVersion {
		return
	}
	if own, ok := p.(*peer); ok {
		own.s.barrier(ctx, own.send)
		return
	}
	bctx, cancel := context.WithTimeout(ctx, barrierTimeout)
	defer cancel()
	_, _ = p.Call(bctx, "ping", nil)
}

// barrier is ProgressBarrier for a session of this package.
func (s *session) barrier(ctx context.Context, send func([]byte) error) {
	s.mu.Lock()
	if s.barrierOff {
		s.mu.Unlock()
		return
	}
	id := s.nextID.Add(1)
	key := fmt.Sprint(id)
	if s.barrierPings == nil {
		s.barrierPings = map[string]bool{}
	}
	s.barrierPings[key] = true
	s.mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, barrierTimeout)
	defer cancel()
	_, err := s.callID(bctx, id, send, "ping", nil)
	timedOut := err != nil && ctx.Err() == nil && errors.Is(bctx.Err(), context.DeadlineExceeded)
	s.mu.Lock()
	// Still here unless the answer came (or came late, just now).
	pending := s.barrierPings[key]
	if !timedOut || !pending {
		delete(s.barrierPings, key)
	} else {
		s.barrierOff = true
	}
	s.mu.Unlock()
	if timedOut && pending {
		s.srv.warnf("client did not answer ping (id %d) within %s: replies after progress no longer wait for its answer in this session", id, barrierTimeout)
	}
}

// withMember puts value in place of member name's value in recorded
// params (an object that has it: a progress notification's token, a
// request's taskId), every other byte as recorded: the live progress
// token in progress, the live client's task id.
func withMember(params json.RawMessage, name string, value json.RawMessage) json.RawMessage {
	out, _, _ := jsonrpc.ReplaceMembers(params, func(path []string, member string) bool { return len(path) == 0 && member == name }, value)
	return out
}

// nearestScan bounds the work spent on an error message.
const nearestScan = 2000

// Nearest implements Nearer: among recorded requests with the same method,
// the one whose canonical params differ in the fewest leaves, and of those
// the one that shares the most with the live request (a retry that gives
// other input than the recorded one is nearest that recorded retry, not
// the call before it that gave none).
func (s *cassetteSession) Nearest(req *Request) (nearest, diff string, ok bool) {
	c := s.c
	// The live key, written once, into room for it (as prepare writes
	// it): the leaves are slices of it. Params that do not canonicalize
	// leave the method alone.
	key, _, _ := appendKey(make([]byte, 0, len(req.Method)+1+len(req.Params)), req.Method, req.Params)
	key = blankIgnored(key, req.Method, c.ignore) // as it was matched
	live := flatten(key[len(req.Method)+1:])
	prefix := ""
	s.mu.Lock()
	pos := c.skipPings(s.pos)
	s.mu.Unlock()
	if c.match.strict && pos >= len(c.reqs) {
		prefix = "(every recorded request was already answered) "
	}
	if c.match.strict && pos < len(c.reqs) {
		it := c.reqs[pos]
		minus, plus := leafDiff(flatten(it.canonBytes()), live)
		d := formatDiff(minus, plus)
		if it.method != req.Method {
			d = fmt.Sprintf("- method=%s\n+ method=%s", it.method, req.Method)
		}
		return "next in recorded order: " + c.where(it) + " " + it.described(), d, true
	}
	cands := c.byMethod[req.Method]
	if len(cands) == 0 {
		return "", "", false
	}
	var best *interaction
	var bestMinus, bestPlus []leaf
	for i, it := range cands {
		if i == nearestScan {
			break
		}
		minus, plus := leafDiff(flatten(it.canonBytes()), live)
		d, bestD := len(minus)+len(plus), len(bestMinus)+len(bestPlus)
		// Of the live leaves, those not in plus are shared.
		if best == nil || d < bestD || (d == bestD && len(plus) < len(bestPlus)) {
			best, bestMinus, bestPlus = it, minus, plus
		}
	}
	d := formatDiff(bestMinus, bestPlus)
	if d == "" {
		d = "(same params: every recorded answer to it was used)"
	}
	return prefix + c.where(best) + " " + best.described(), d, true
}
