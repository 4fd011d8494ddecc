package replay

import (
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/plural"
)

// Lost messages are counted in the report one by one, but said on stderr
// at most once a second for each session, stream and reason: a client
// that stopped reading its legacy stream loses one message per message
// past the bound, and a line for each would bury everything else. What
// is held back is said when the next line is due, when the session ends
// and when the server closes.

// lossEvery is how often one session's losses for one reason are said.
const lossEvery = time.Second

// lossKey is what one warning line is about.
type lossKey struct{ session, stream, why string }

// heldLoss is what was lost for one lossKey since its last line.
type heldLoss struct {
	said    time.Time // when the last line went out
	n       int       // lost since, not yet said
	methods []string  // theirs, in the order first lost
}

// countUndelivered counts the messages session ended without sending on
// its stream, and says why (see lossEvery).
func (s *Server) countUndelivered(session, stream, why string, msgs [][]byte) {
	if len(msgs) == 0 {
		return
	}
	key := lossKey{session, stream, why}
	now := s.clock()
	s.mu.Lock()
	if s.losses == nil {
		s.losses = map[lossKey]*heldLoss{}
	}
	held := s.losses[key]
	if held == nil {
		held = &heldLoss{}
		s.losses[key] = held
	}
	for _, m := range msgs {
		sum := jsonrpc.Classify(m)
		method := sum.Method
		if method == "" { // an answer: over SSE and WebSocket it shares the stream
			method = "(" + sum.Kind.String() + ")"
		}
		i := slices.IndexFunc(s.undelivered, func(u Undelivered) bool { return u.Method == method })
		if i < 0 {
			i = len(s.undelivered)
			s.undelivered = append(s.undelivered, Undelivered{Method: method})
		}
		s.undelivered[i].Count++
		if !slices.Contains(held.methods, method) {
			held.methods = append(held.methods, method)
		}
	}
	held.n += len(msgs)
	var line func()
	if held.said.IsZero() || now.Sub(held.said) >= lossEvery {
		line = s.sayLossLocked(key, held, now)
	}
	s.mu.Unlock()
	if line != nil {
		line()
	}
}

// sayLossLocked takes what held has to say and returns the function that
// says it, to be called without s.mu.
func (s *Server) sayLossLocked(key lossKey, held *heldLoss, now time.Time) func() {
	n, methods, again := held.n, strings.Join(held.methods, ", "), !held.said.IsZero()
	held.n, held.methods, held.said = 0, nil, now
	return func() {
		noun := "message"
		if again {
			noun = "more message"
		}
		s.warnf("session %s: %s for its %s never reached the client (%s): %s", key.session, plural.Count(n, noun), key.stream, methods, key.why)
	}
}

// sayHeldLosses says what is held back for session ("" for every
// session), now.
func (s *Server) sayHeldLosses(session string) {
	now := s.clock()
	var lines []func()
	s.mu.Lock()
	for key, held := range s.losses {
		if session != "" && key.session != session {
			continue
		}
		if held.n > 0 {
			lines = append(lines, s.sayLossLocked(key, held, now))
		}
		if session != "" {
			delete(s.losses, key) // its later losses, if any, start afresh
		}
	}
	s.mu.Unlock()
	for _, line := range lines {
		line()
	}
}
