package replay

import (
	"encoding/json"
	"slices"
)

// A MatchFunc gives value-level tolerance that member names alone
// (Ignore) cannot express: a tool argument holding a fresh timestamp or
// UUID, a query that may differ in case, a number within a tolerance.

// MatchFunc decides whether the recorded request recorded may answer the
// live request live, which the normal match (method plus canonical params,
// Options.Match, Ignore, redacted values) found no answer for. It is
// asked only then, so exact matches keep their speed and their order.
//
// A cassette asks it about the recorded requests of the live request's
// method, in recorded order: first those no live request used yet, the
// first it accepts answering and counting as used (so that repeated
// requests get their recorded answers in order, the report counts the
// request matched, and Unused stays right); when it accepts none of
// those, the last recorded one it accepts answers again, as the last
// answer does once identical requests run out. When the cassette recorded
// the method in both protocol eras, only those of the live request's era
// are asked about; in --match strict mode, only the request expected
// next. It is not asked about client notifications (they get no answer),
// nor by scripts, which say with their own "when" what they accept.
//
// It may be called from many goroutines at once. It must not modify the
// params it is given. A panic in it is recovered: the request is then
// unmatched, and the warning (Options.Log) names the panic.
type MatchFunc func(live, recorded MatchRequest) bool

// MatchRequest is a request as a MatchFunc sees it.
type MatchRequest struct {
	Method string
	// Params are in canonical form, on both sides alike: object keys
	// sorted, no white space, volatile members left out (progress token,
	// tracing keys, the 2026-07-28 per-request _meta keys; see
	// docs/REPLAY.md), members Ignore names as "(ignored)", and absent or
	// null params as {}. A recorded secret is "[redacted]".
	Params json.RawMessage
}

// matchRequest is key (method, NUL, canonical params) as a MatchFunc
// sees it.
func matchRequest(method string, key []byte) MatchRequest {
	params := key[len(method)+1:]
	if len(params) == 0 {
		params = []byte("{}")
	}
	return MatchRequest{Method: method, Params: params}
}

// accepts asks the MatchFunc whether recorded it may answer live. panicked: the
// func panicked, which a warning says; the request is then unmatched.
func (c *Cassette) accepts(live MatchRequest, it *interaction) (ok, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			ok, panicked = false, true
			if c.match.warnf != nil {
				c.match.warnf("MatchFunc panicked on live %s against recorded %s: %v; the request is unmatched",
					describe(live.Method, string(live.Params)), c.where(it), r)
			}
		}
	}()
	return c.match.fn(live, matchRequest(it.method, it.key)), false
}

// prepareByFunc answers req, which the normal match found no answer for,
// with a recorded request of its method that MatchFunc accepts (see
// MatchFunc for which, and in what order).
func (s *cassetteSession) prepareByFunc(req *Request) (*Prepared, bool) {
	c := s.c
	if c.match.fn == nil || req.ID == nil {
		return nil, false
	}
	key, _, valid := appendKey(nil, req.Method, req.Params)
	if !valid {
		return nil, false
	}
	key = blankIgnored(key, req.Method, c.ignore)
	live := matchRequest(req.Method, key)
	var it *interaction
	if c.match.strict {
		it = s.nextByFunc(req, live)
	} else {
		it = s.firstByFunc(req, live)
	}
	if it == nil {
		return nil, false
	}
	s.guess.Store(it.n + 1)
	if p := s.forEra(req, it, s.planFor(req, it)); p != nil {
		return p, true
	}
	return nil, false
}

// nextByFunc is, in strict mode, the request expected next, if it has
// req's method and MatchFunc accepts it; it moves the session on.
func (s *cassetteSession) nextByFunc(req *Request, live MatchRequest) *interaction {
	c := s.c
	s.mu.Lock()
	pos := c.skipPings(s.pos)
	s.mu.Unlock()
	if pos >= len(c.reqs) || c.reqs[pos].method != req.Method {
		return nil
	}
	it := c.reqs[pos]
	// Not under mu: the func is the user's, and may take its time.
	if ok, _ := c.accepts(live, it); !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.skipPings(s.pos) != pos {
		return nil // another request of the session took it meanwhile
	}
	s.pos = pos + 1
	markUsed(it)
	return it
}

// firstByFunc is the recorded request of req's method that MatchFunc
// accepts: the first not used yet, marked used, else the last.
func (s *cassetteSession) firstByFunc(req *Request, live MatchRequest) *interaction {
	c := s.c
	cands := c.byMethod[req.Method]
	// Of a method recorded in both eras, the live request's era only, as
	// the normal match answers a key recorded in both (Cassette.ofEra).
	inEra := func(*interaction) bool { return true }
	if c.stateless != nil {
		stateless := func(it *interaction) bool { return c.stateless[it.sess] }
		handshake := func(it *interaction) bool { return !c.stateless[it.sess] }
		if slices.ContainsFunc(cands, stateless) && slices.ContainsFunc(cands, handshake) {
			want := statelessMeta(req.Params)
			inEra = func(it *interaction) bool { return stateless(it) == want }
		}
	}
	for _, it := range cands {
		if it.used.Load() || !inEra(it) {
			continue
		}
		ok, panicked := c.accepts(live, it)
		if panicked {
			return nil
		}
		// Claimed as the normal match claims: a live request of another
		// session may want it at the same time.
		if !ok || !it.used.CompareAndSwap(false, true) {
			continue
		}
		if it.refused() && !c.serveRefusal(it) {
			continue // a refusal is given once per replay
		}
		s.tookByFunc(req, it)
		return it
	}
	for _, it := range slices.Backward(cands) {
		if !inEra(it) || it.refused() {
			continue
		}
		ok, panicked := c.accepts(live, it)
		if panicked {
			return nil
		}
		if ok {
			return it
		}
	}
	return nil
}

// tookByFunc keeps the normal match's counts right after MatchFunc took
// it, one of the occurrences of a key recorded more than once: the
// session's next request with that very key gets the occurrence after it,
// and the count over all sessions (keyIndex.claim) includes it.
func (s *cassetteSession) tookByFunc(req *Request, it *interaction) {
	c := s.c
	if it.dup == 0 {
		return
	}
	all := c.byKey.dups[it.dup-1]
	first := all[0]
	c.byKey.claims[it.dup-1].Add(1)
	if same := c.ofEra(first, req); same != nil {
		all = same
	}
	i := slices.Index(all, it)
	if i < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		s.next = map[*interaction]int{}
	}
	s.next[first] = max(s.next[first], i+1)
}
