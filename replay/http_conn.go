package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Sessionless (2026-07-28) traffic over HTTP. Requests carry no session
// id, yet repeated identical requests are answered in recorded order per
// session, so mcpmock groups them into replay sessions of their own, one
// per client, so that two clients replaying at once do not take each
// other's answers:
//
//   - by the client's identity when requests carry one (_meta
//     io.modelcontextprotocol/clientInfo, which the Go SDK sends on every
//     request): a client uses several connections at once (the Go SDK's
//     subscriptions/listen stream holds one while its calls go on another,
//     and its pool hands out whichever is idle), so the connection alone
//     would split one client's requests, and its listen stream from the
//     calls whose change notifications it should carry;
//   - otherwise by client connection, as mcpspy records such traffic. A
//     connection is known by its remote address, which works whoever owns
//     the http.Server; its session ends when it closes (if the server calls
//     ConnState). Change notifications of these sessions go to every open
//     listen stream, as a real server's would, since the stream that should
//     carry them may be on another connection.
//
// Either session ends once idle for Options.SessionIdle.

// name is how warnings name the session: its id, or for a sessionless
// one its number (as the journal has it) and what groups its requests.
func (h *httpSession) name() string {
	if h.id != "" {
		return h.id
	}
	return fmt.Sprintf("%d (sessionless, %s)", h.sess.num, h.conn)
}

// sessionlessKey names the replay session of a sessionless request.
func sessionlessKey(r *http.Request, p *peek) (key string, byConn bool) {
	if ci := p.Params.Meta["io.modelcontextprotocol/clientInfo"]; len(ci) > 0 && string(ci) != "null" {
		return "client " + string(ci), false
	}
	return "conn " + r.RemoteAddr, true
}

// sessionlessSession returns the session of a sessionless request, marked
// in use until doneHTTP; nil once the server is closing. handshake: the
// request is of the handshake era, from a client of a server without
// sessions (http_habits.go); its initialize starts its connection's
// session anew, as a new client.
func (s *Server) sessionlessSession(r *http.Request, p *peek, handshake bool) *httpSession {
	st := &s.http
	key, byConn := sessionlessKey(r, p)
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil
	}
	now := s.clock()
	gone := s.sweepLocked(now)
	h := st.conns[key]
	if h != nil && (s.expiredLocked(h, now) || handshake && p.Method == "initialize") {
		delete(st.conns, key)
		if h.active == 0 {
			gone = append(gone, h)
		} else {
			s.retireLocked(h)
		}
		h = nil
	}
	if h == nil {
		h = &httpSession{conn: key, byConn: byConn, used: now}
		h.sess = s.newSession(context.Background(), nil, nil)
		sess, name := h.sess, h.name()
		switch {
		case handshake:
			// Such a server has no stream of its own: what it sends
			// outside a request's answer never reaches the client.
			h.sess.out = func(msg []byte) error {
				s.countUndelivered(name, "stream", errNoStream.Error(), [][]byte{msg})
				return errNoStream
			}
			h.sess.version = r.Header.Get("Mcp-Protocol-Version") // until an initialize says
		case byConn:
			h.sess.out = func(msg []byte) error { return s.toListenStreams(name, msg) }
		default:
			h.sess.out = func(msg []byte) error { return sess.toListeners(name, msg) }
		}
		h.sess.sessionless = !handshake
		if st.conns == nil {
			st.conns = map[string]*httpSession{}
		}
		st.conns[key] = h
	}
	h.active++
	st.mu.Unlock()
	s.dropAll(gone)
	return h
}

// retireLocked keeps h, replaced while it had requests in flight, for
// doneHTTP to end once they finish; s.http.mu is held.
func (s *Server) retireLocked(h *httpSession) {
	if s.http.retired == nil {
		s.http.retired = map[*httpSession]struct{}{}
	}
	s.http.retired[h] = struct{}{}
}

// RestartSessionless makes the next request of every sessionless
// (2026-07-28) client start a new replay session: mcpmock serve --watch
// calls it after reloading a script, since such a client has no session
// of its own to end, and would otherwise meet the old version until idle.
// A request or listen stream in flight finishes with the session it began
// in, which then ends.
func (s *Server) RestartSessionless() {
	st := &s.http
	st.mu.Lock()
	var gone []*httpSession
	for key, h := range st.conns {
		delete(st.conns, key)
		if h.active == 0 {
			gone = append(gone, h)
			continue
		}
		s.retireLocked(h)
	}
	st.mu.Unlock()
	s.dropAll(gone)
}

// ConnState ends the sessionless session of a client connection when the
// connection closes. Set it as the http.Server's ConnState when serving
// Handler; without it such a session ends once idle (Options.SessionIdle).
func (s *Server) ConnState(c net.Conn, state http.ConnState) {
	if state != http.StateClosed && state != http.StateHijacked {
		return
	}
	key := "conn " + c.RemoteAddr().String()
	s.http.mu.Lock()
	h := s.http.conns[key]
	s.http.mu.Unlock()
	if h != nil {
		s.dropHTTPSession(h)
	}
}

// waitingSession is the sessionless session waiting for the client's reply
// with this id: the reply may come on another connection than the request
// it answers went out with.
func (s *Server) waitingSession(own *httpSession, id string) *session {
	key := jsonrpc.CanonicalIDString(id) // as session.response finds its waiter
	waits := func(h *httpSession) bool {
		h.sess.mu.Lock()
		defer h.sess.mu.Unlock()
		return h.sess.waiters[key] != nil
	}
	if waits(own) {
		return own.sess
	}
	s.http.mu.Lock()
	var others []*httpSession
	for _, h := range s.http.conns {
		if h != own {
			others = append(others, h)
		}
	}
	s.http.mu.Unlock()
	for _, h := range others {
		if waits(h) {
			return h.sess
		}
	}
	return own.sess
}

// listenHub is the open subscriptions/listen streams of sessionless
// clients, and what waits for the first of them.
type listenHub struct {
	mu      sync.Mutex
	listens map[*lockedExchange]struct{}
	pending listenQueue
}

func (hub *listenHub) add(ex exchange, params json.RawMessage) *lockedExchange {
	l := &lockedExchange{ex: ex, queue: &hub.pending, queueMu: &hub.mu, filter: filterOf(params)}
	hub.mu.Lock()
	if hub.listens == nil {
		hub.listens = map[*lockedExchange]struct{}{}
	}
	hub.listens[l] = struct{}{}
	hub.mu.Unlock()
	return l
}

func (hub *listenHub) remove(l *lockedExchange) {
	hub.mu.Lock()
	delete(hub.listens, l)
	hub.mu.Unlock()
}

// end returns what no listen stream took; the server is closing.
func (hub *listenHub) end() (from []string, msgs [][]byte) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	return hub.pending.end()
}

// hubWhy says why the hub's messages were lost: what a session sends
// waits for any client's listen stream, even after the session ends.
const hubWhy = "no client had a subscriptions/listen stream open before the server closed"

// toListenStreams is the out of the sessions of clients known by their
// connection; name is the session's.
func (s *Server) toListenStreams(name string, msg []byte) error {
	hub := &s.http.hub
	ready := func() []*lockedExchange { return readyOf(maps.Keys(hub.listens), msg) }
	err := deliver(&hub.mu, ready, &hub.pending, name, msg)
	if err != nil {
		s.countUnheard([]string{name}, [][]byte{msg}, whyUnheard(err, hubWhy))
	}
	return err
}
