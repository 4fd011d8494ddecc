package recorder

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// httpSession is one cassette session of the HTTP proxy: one Mcp-Session-Id,
// one legacy SSE connection, or one client connection's sessionless
// traffic. Its store session is made on the first frame, so requests that
// carry no message (a 405 GET) leave no empty session behind.
type httpSession struct {
	p         *HTTPProxy
	transport string
	streams   atomic.Uint64 // StreamID source

	// guarded by p.mu
	sid       string     // Mcp-Session-Id, once known
	conn      *connState // set while the session is its connection's sessionless one
	legacyKey string     // the endpoint this legacy session's POSTs go to

	mu      sync.Mutex
	sess    *store.Session
	tried   bool
	endOnce sync.Once
}

// connState is what the proxy knows about one client connection.
type connState struct {
	sess *httpSession  // the connection's sessionless session, guarded by p.mu
	up   *upstreamConn // the connection's way upstream, if it has its own
}

type connKey struct{}

func (p *HTTPProxy) connContext(ctx context.Context, c net.Conn) context.Context {
	cs := &connState{}
	if p.perConnAddr != "" {
		cs.up = newUpstreamConn(p.perConnAddr)
	}
	p.mu.Lock()
	p.conns[c] = cs
	p.mu.Unlock()
	return context.WithValue(ctx, connKey{}, cs)
}

// connClosed ends a connection's sessionless session when it closes
// (2026-07-28 traffic has no session id, so the connection is the
// session) and closes its upstream connection.
func (p *HTTPProxy) connClosed(c net.Conn) {
	p.mu.Lock()
	cs := p.conns[c]
	delete(p.conns, c)
	var hs *httpSession
	if cs != nil {
		hs, cs.sess = cs.sess, nil
		if hs != nil {
			hs.conn = nil
		}
	}
	p.mu.Unlock()
	if cs != nil && cs.up != nil { // owned by the connection's goroutine, which is done
		cs.up.Close()
	}
	if hs != nil {
		end := store.EndInfo{Reason: store.EndEOF}
		if p.gate.closed() { // mcpspy closed it, not the client
			end = interrupted
		}
		hs.end(end)
	}
}

// interrupted is how a session ends that was still open when mcpspy was
// stopped.
var interrupted = store.EndInfo{Reason: store.EndSignal, Signal: "mcpspy interrupted"}

// newSessionLocked registers a session; p.mu is held.
func (p *HTTPProxy) newSessionLocked(transport string) *httpSession {
	hs := &httpSession{p: p, transport: transport}
	p.all[hs] = true
	return hs
}

// sessionForRequest finds the session a request belongs to. It returns nil
// for a GET without a session id: that stream's first event decides (a
// legacy endpoint event starts a new session).
//
// A sessionless initialize always starts a session of its own: clients
// share pooled connections, so the connection it came on may have carried
// another client's sessionless requests (go-sdk's server/discover probe)
// that must not end up in the session the server is about to issue.
func (p *HTTPProxy) sessionForRequest(r *http.Request, target string, initialize bool) *httpSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sid := r.Header.Get(headerSessionID); sid != "" {
		hs := p.bySID[sid]
		if hs == nil {
			hs = p.ended.m[sid] // late traffic of a session that ended
		}
		if hs == nil { // issued before this proxy started, or unknown: record it anyway
			hs = p.newSessionLocked(store.TransportHTTP)
			hs.sid = sid
			p.bySID[sid] = hs
		}
		return hs
	}
	if hs := p.legacy[target]; hs != nil {
		return hs
	}
	if hs := p.endedLegacy.m[target]; hs != nil && r.Method == http.MethodPost {
		// A POST after its SSE stream ended (the upstream died, or
		// closed it): the legacy session's, not one of its own, which
		// would lint as a Streamable HTTP session of one stray message.
		// Not a GET: one to the same path is a new stream, whose
		// endpoint is to be rewritten (a fuzzed endpoint "/sse" found it).
		return hs
	}
	if r.Method == http.MethodGet {
		return nil
	}
	if initialize {
		return p.newSessionLocked(store.TransportHTTP)
	}
	return p.connSessionLocked(r)
}

// adopt makes an initialize that got no session id (a server without
// sessions) its connection's sessionless session, so the requests that
// follow on that connection join it. A legacy session is not adopted: it
// belongs to its SSE connection, and its POSTs find it by their endpoint
// whatever connection they come on; adopted, it would end when the
// client closed the connection of its initialize POST.
func (p *HTTPProxy) adopt(r *http.Request, hs *httpSession) {
	cs, _ := r.Context().Value(connKey{}).(*connState)
	p.mu.Lock()
	defer p.mu.Unlock()
	if cs != nil && cs.sess == nil && hs.sid == "" && hs.transport != store.TransportLegacySSE {
		cs.sess = hs
		hs.conn = cs
	}
}

// connSessionLocked returns the sessionless session of the request's
// connection; p.mu is held.
func (p *HTTPProxy) connSessionLocked(r *http.Request) *httpSession {
	cs, _ := r.Context().Value(connKey{}).(*connState)
	if cs == nil { // served without Serve: one session per request
		return p.newSessionLocked(store.TransportHTTP)
	}
	if cs.sess == nil {
		cs.sess = p.newSessionLocked(store.TransportHTTP)
		cs.sess.conn = cs
	}
	return cs.sess
}

func (p *HTTPProxy) connSession(r *http.Request) *httpSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connSessionLocked(r)
}

// bind gives hs the Mcp-Session-Id the server just issued. The session
// stops being its connection's sessionless session: later requests name it.
func (p *HTTPProxy) bind(hs *httpSession, sid string) {
	p.mu.Lock()
	if p.bySID[sid] != nil || hs.sid != "" {
		p.mu.Unlock()
		return
	}
	hs.sid = sid
	p.bySID[sid] = hs
	if hs.conn != nil && hs.conn.sess == hs {
		hs.conn.sess = nil
	}
	hs.conn = nil
	p.mu.Unlock()
	if s := hs.store(); s != nil {
		s.Update(func(info *store.SessionInfo) { info.HTTPSessionID = sid })
	}
}

// newLegacy starts the session of one legacy SSE connection.
func (p *HTTPProxy) newLegacy(key string) *httpSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	hs := p.newSessionLocked(store.TransportLegacySSE)
	if key != "" {
		hs.legacyKey = key
		p.legacy[key] = hs
	}
	return hs
}

// store returns the cassette session, creating it on first use. It is on
// the forwarding path, so the session is started, not made: the writer's
// next commit stores it (a closed writer is reported once; traffic still
// flows).
func (hs *httpSession) store() *store.Session {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.tried {
		return hs.sess
	}
	hs.tried = true
	p := hs.p
	info := p.Info
	info.Transport = hs.transport
	p.mu.Lock()
	info.HTTPSessionID = hs.sid
	p.mu.Unlock()
	s, err := p.Writer.StartSession(info)
	if err != nil {
		p.logf("mcpspy: cannot record a new session: %v (traffic still flows)", err)
		return nil
	}
	hs.sess = s
	p.started.Store(s)
	return s
}

func (hs *httpSession) append(dir store.Dir, t time.Time, frame []byte, meta *store.HTTPMeta) {
	if s := hs.store(); s != nil {
		s.Append(dir, t, frame, meta)
	}
}

// appendSent records the message a client's request carried and returns
// it, for sentMessage.answered; the zero sentMessage when the session is
// not recorded.
func (hs *httpSession) appendSent(t time.Time, frame []byte, meta *store.HTTPMeta) sentMessage {
	s := hs.store()
	if s == nil {
		return sentMessage{}
	}
	seq := s.Append(store.C2S, t, frame, meta)
	return sentMessage{sess: s, m: store.Message{Seq: seq, Dir: store.C2S, Time: t, Frame: frame, HTTP: meta}}
}

// sentMessage is a client's message as recorded, kept until its request
// is answered; the zero value is none (it lives in the exchange, so that
// a request costs no allocation more).
type sentMessage struct {
	sess *store.Session
	m    store.Message
}

func (sm *sentMessage) recorded() bool { return sm.sess != nil }

// answered records on the client's message the status and headers of an
// answer that carried no message (a 202, an error status with no body,
// mcpspy's own 502), and note, if any: no other record of that answer
// would be kept. With no message recorded it does nothing.
func (sm *sentMessage) answered(status int, header http.Header, note string) {
	if !sm.recorded() {
		return
	}
	meta := *sm.m.HTTP // the store has the first: a copy
	meta.Status, meta.ResponseHeader = status, header
	// Only the metadata: the store need not keep the frame, however
	// long, until its next commit, nor store it again.
	sm.sess.AmendMeta(sm.m.Seq, &meta, note)
}

// refusedBy says whether a response with status and body refused the
// client's message rather than answered it: an error status whose body
// is no answer to it (a text error page, go-sdk's "session not found"; a
// JSON-RPC error with a null id, the TypeScript SDK's). The body is
// recorded as a frame of its own, as it came; the refusal goes on the
// message too, so that lint and replay find it where they find a
// refusal without a body. A batch is left as it is: a body may answer
// some of it.
func (sm *sentMessage) refusedBy(status int, body []byte) bool {
	if !sm.recorded() || status < 400 || status > 599 {
		return false
	}
	sent := jsonrpc.Classify(sm.m.Frame)
	switch sent.Kind {
	case jsonrpc.Batch:
		return false
	case jsonrpc.Request:
		return !answers(body, sent.ID)
	}
	return true
}

// keepBare stores in the session's info a request whose answer, like
// itself, carried no message.
func (hs *httpSession) keepBare(b store.BareExchange) {
	if s := hs.store(); s != nil {
		s.Update(func(info *store.SessionInfo) { info.AddBare(b) })
	}
}

// keepPriming stores the priming events a stream ended with in the
// session's info. A session with nothing else recorded starts here, so a
// GET stream that only primed (and a client that resumes from its id) is
// still on record.
func (hs *httpSession) keepPriming(sp store.StreamPriming) {
	if s := hs.store(); s != nil {
		s.Update(func(info *store.SessionInfo) { info.Priming = append(info.Priming, sp) })
	}
}

// end records how the session ended (once) and forgets it.
func (hs *httpSession) end(e store.EndInfo) {
	hs.endOnce.Do(func() {
		p := hs.p
		p.mu.Lock()
		delete(p.all, hs)
		if hs.sid != "" && p.bySID[hs.sid] == hs {
			delete(p.bySID, hs.sid)
			p.ended.add(hs.sid, hs)
		}
		if hs.legacyKey != "" && p.legacy[hs.legacyKey] == hs {
			delete(p.legacy, hs.legacyKey)
			p.endedLegacy.add(hs.legacyKey, hs)
		}
		p.mu.Unlock()
		hs.mu.Lock()
		s := hs.sess
		hs.tried = true // a late frame after the end starts nothing
		hs.mu.Unlock()
		if s == nil {
			return
		}
		// Not End: the client may be waiting for its DELETE's answer, and
		// the commit can wait for the writer's next group commit.
		s.Finish(e)
	})
}

// endAll ends every session still open (mcpspy is stopping).
func (p *HTTPProxy) endAll(e store.EndInfo) {
	p.mu.Lock()
	all := make([]*httpSession, 0, len(p.all))
	for hs := range p.all {
		all = append(all, hs)
	}
	p.mu.Unlock()
	for _, hs := range all {
		hs.end(e)
	}
}

func (p *HTTPProxy) logf(format string, a ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, format+"\n", a...)
	}
}

// maxEnded is how many ended sessions stay findable by each key.
const maxEnded = 4096

// endedSessions remembers sessions that ended by a key late traffic
// names (an Mcp-Session-Id, a legacy endpoint), the latest maxEnded of
// them; guarded by p.mu.
type endedSessions struct {
	m     map[string]*httpSession
	order []string
}

func (e *endedSessions) add(key string, hs *httpSession) {
	if e.m == nil {
		e.m = map[string]*httpSession{}
	}
	if _, again := e.m[key]; again { // a server that gives every session one endpoint
		e.m[key] = hs
		return
	}
	e.m[key] = hs
	e.order = append(e.order, key)
	if len(e.order) > maxEnded {
		delete(e.m, e.order[0])
		e.order = e.order[1:]
	}
}
