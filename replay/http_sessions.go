package replay

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The table of HTTP replay sessions (Streamable HTTP with and without a
// session id, legacy SSE connections): how they are made, found, kept in
// use, left idle and ended.

// httpState is the Server's HTTP sessions. Session ids count up: a mock is
// deterministic, and it binds loopback.
type httpState struct {
	mu       sync.Mutex
	sessions map[string]*httpSession // by Mcp-Session-Id
	legacy   map[string]*httpSession // by the legacy endpoint's sessionId
	conns    map[string]*httpSession // sessionless traffic, by client (see http_conn.go)
	// retired are sessionless sessions RestartSessionless replaced while
	// they had requests in flight, kept so that Close still ends them.
	retired map[*httpSession]struct{}
	n       int
	closed  bool
	now     func() time.Time // nil: time.Now; tests set a clock
	swept   time.Time
	hub     listenHub
}

// httpSession is one replay session over HTTP: an Mcp-Session-Id, a legacy
// SSE connection, or one client connection's sessionless (2026-07-28)
// requests.
type httpSession struct {
	id     string // "" for a sessionless session
	conn   string // a sessionless session's key
	byConn bool   // keyed by its client connection
	sess   *session
	q      *queue    // legacy: messages for the SSE stream
	log    *eventLog // Streamable HTTP with a session id: its event streams

	// guarded by httpState.mu
	active int       // requests and streams being served
	used   time.Time // when the last of them ended
}

// defaultSessionIdle is Options.SessionIdle's default.
const defaultSessionIdle = 30 * time.Minute

// sessionIdle is how long an unused session lives; 0: for ever.
func (s *Server) sessionIdle() time.Duration {
	switch d := s.opts.SessionIdle; {
	case d == 0:
		return defaultSessionIdle
	case d < 0:
		return 0
	default:
		return d
	}
}

func (s *Server) clock() time.Time {
	if s.http.now != nil {
		return s.http.now()
	}
	return time.Now()
}

// expiredLocked says whether h has been idle too long; s.http.mu is held.
func (s *Server) expiredLocked(h *httpSession, now time.Time) bool {
	idle := s.sessionIdle()
	return idle > 0 && h.active == 0 && now.Sub(h.used) >= idle
}

// sweepLocked unregisters the expired sessions and returns them, to be
// dropped once s.http.mu is released. It looks at most a few times per idle
// period, so that a busy server does not walk every session per request.
func (s *Server) sweepLocked(now time.Time) []*httpSession {
	idle := s.sessionIdle()
	if idle == 0 || now.Sub(s.http.swept) < idle/4 {
		return nil
	}
	s.http.swept = now
	var gone []*httpSession
	for _, m := range []map[string]*httpSession{s.http.sessions, s.http.legacy, s.http.conns} {
		for k, h := range m {
			if s.expiredLocked(h, now) {
				delete(m, k)
				gone = append(gone, h)
			}
		}
	}
	return gone
}

func (s *Server) dropAll(hs []*httpSession) {
	for _, h := range hs {
		s.dropHTTPSession(h)
	}
}

// newHTTPSession starts a session, in use by the caller until doneHTTP.
func (s *Server) newHTTPSession(legacy bool) (*httpSession, error) {
	st := &s.http
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil, errQueueClosed
	}
	now := s.clock()
	gone := s.sweepLocked(now)
	st.n++
	h := &httpSession{id: fmt.Sprintf("mcpmock-%d", st.n), active: 1, used: now}
	m := &st.sessions
	out := func(msg []byte) error { return h.log.push(msg) }
	if legacy {
		m = &st.legacy
		h.q = newQueue(func(msgs [][]byte, why string) { s.countUndelivered(h.id, "SSE stream", why, msgs) })
		out = h.q.push
	} else {
		h.log = newEventLog(func(msgs [][]byte, why string) { s.countUndelivered(h.id, "GET stream", why, msgs) })
	}
	h.sess = s.newSession(context.Background(), out, func() { s.dropHTTPSession(h) })
	if *m == nil {
		*m = map[string]*httpSession{}
	}
	(*m)[h.id] = h
	st.mu.Unlock()
	s.dropAll(gone)
	return h, nil
}

// useHTTPSession finds a live session and marks it in use until doneHTTP.
// An unknown or expired one is nil.
func (s *Server) useHTTPSession(id string, legacy bool) *httpSession {
	st := &s.http
	st.mu.Lock()
	m := st.sessions
	if legacy {
		m = st.legacy
	}
	h := m[id]
	var gone []*httpSession
	if h != nil && s.expiredLocked(h, s.clock()) {
		delete(m, id)
		gone, h = []*httpSession{h}, nil
	}
	if h != nil {
		h.active++
	}
	st.mu.Unlock()
	s.dropAll(gone)
	return h
}

// doneHTTP ends a use of h: its idle time starts when the last one ends.
func (s *Server) doneHTTP(h *httpSession) {
	s.http.mu.Lock()
	h.active--
	h.used = s.clock()
	_, retired := s.http.retired[h]
	drop := retired && h.active == 0
	if drop {
		delete(s.http.retired, h)
	}
	s.http.mu.Unlock()
	if drop {
		s.dropHTTPSession(h)
	}
}

func (s *Server) dropHTTPSession(h *httpSession) {
	st := &s.http
	st.mu.Lock()
	if h.id != "" && st.sessions[h.id] == h {
		delete(st.sessions, h.id)
	}
	if h.id != "" && st.legacy[h.id] == h {
		delete(st.legacy, h.id)
	}
	if h.conn != "" && st.conns[h.conn] == h {
		delete(st.conns, h.conn)
	}
	st.mu.Unlock()
	s.closeStreams(h)
	s.sayHeldLosses(h.id)
	go h.sess.close() // may be called from one of the session's own goroutines
}

// closeStreams ends h's event streams. What a sessionless session held for
// its listen streams is lost with it, unless it waits for any client's
// (the hub's, which the server's Close ends).
func (s *Server) closeStreams(h *httpSession) {
	if h.q != nil {
		h.q.close()
	}
	if h.log != nil {
		h.log.close()
	}
	if h.conn != "" && !h.byConn {
		from, msgs := h.sess.endListen()
		s.countUnheard(from, msgs, unheardWhy)
	}
}

// Close ends every HTTP, SSE and WebSocket session and cancels what they
// have in flight. Stdio sessions end with their ServeStdio call.
func (s *Server) Close() {
	st := &s.http
	st.mu.Lock()
	st.closed = true
	var all []*httpSession
	for _, m := range []map[string]*httpSession{st.sessions, st.legacy, st.conns} {
		for _, h := range m {
			all = append(all, h)
		}
	}
	for h := range st.retired {
		all = append(all, h)
	}
	st.sessions, st.legacy, st.conns, st.retired = nil, nil, nil, nil
	st.mu.Unlock()
	from, msgs := st.hub.end()
	s.countUnheard(from, msgs, hubWhy)
	for _, h := range all {
		s.closeStreams(h)
		h.sess.close()
	}
	s.closeWebSockets()
	s.sayHeldLosses("")
}
