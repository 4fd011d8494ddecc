package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
)

// Streamable HTTP (2025-03-26 … 2025-11-25, and the stateless 2026-07-28
// form) on /mcp, legacy HTTP+SSE on /sse and /message. Here: routing,
// POST and GET. Beside it: the session table (http_sessions.go), requests
// without a session (http_conn.go), event streams and resumption
// (http_stream.go), header checks (http_headers.go), what a recorded
// server did over HTTP (http_habits.go), the legacy transport
// (http_legacy.go).

// maxBody bounds one POST body.
const maxBody = 64 << 20

// Handler serves Streamable HTTP on /mcp and legacy HTTP+SSE on /sse and
// /message. It checks Origin: only loopback origins (and
// Options.AllowedOrigins) may call it from a browser.
func (s *Server) Handler() http.Handler {
	for _, l := range s.habitsNow().describe() {
		s.warnf("%s", l)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serveStreamable)
	mux.HandleFunc("/sse", s.serveLegacySSE)
	mux.HandleFunc("/message", s.serveLegacyMessage)
	mux.HandleFunc("/", s.serveNoEndpoint)
	return s.checkOrigin(mux)
}

// endpoints names what the HTTP listener serves, for the answers to a
// request that missed them.
const endpoints = "Streamable HTTP is at /mcp, legacy HTTP+SSE at /sse (GET) and /message (POST)"

// serveNoEndpoint answers a path no endpoint is at. A host given the
// base URL, or the listening line cut short, met Go's bare "404 page not
// found", which names no endpoint: the TypeScript SDK puts the body in
// its error, and its SSE client shows only the status, so stderr says it
// too, once.
func (s *Server) serveNoEndpoint(w http.ResponseWriter, r *http.Request) {
	s.wrongEndpoint(w, r, http.StatusNotFound, "Not Found: mcpmock serves nothing at "+r.URL.Path+"; "+endpoints)
}

// wrongEndpoint refuses a request that came to the wrong path or with the
// wrong method, saying where the endpoints are, in the body and (the
// first time) on stderr.
func (s *Server) wrongEndpoint(w http.ResponseWriter, r *http.Request, status int, msg string) {
	// Clients probe for OAuth metadata and browsers for an icon: a 404
	// there is the expected answer, not a mistake to point out.
	probe := strings.HasPrefix(r.URL.Path, "/.well-known/") || r.URL.Path == "/favicon.ico"
	if !probe && !s.wrongPathWarned.Swap(true) {
		s.warnf("%s %s: %d; %s (said once)", r.Method, r.URL.Path, status, endpoints)
	}
	http.Error(w, msg, status)
}

func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o) {
			http.Error(w, "Forbidden: origin "+o+" is not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) originAllowed(origin string) bool {
	for _, a := range s.opts.AllowedOrigins {
		if a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

const sessionHeader = "Mcp-Session-Id"

func (s *Server) serveStreamable(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.servePost(w, r)
	case http.MethodGet:
		s.serveGet(w, r)
	case http.MethodDelete:
		if s.refusedMethod(w, r) {
			return
		}
		h := s.useHTTPSession(r.Header.Get(sessionHeader), false)
		if h == nil {
			http.Error(w, "Not Found: no such session", http.StatusNotFound)
			return
		}
		s.doneHTTP(h)
		s.dropHTTPSession(h)
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", s.habitsNow().allow())
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// refusedMethod answers with 405 a GET or DELETE the server takes not:
// one of the 2026-07-28 era, which has neither, or one the recorded
// server refused (http_habits.go).
func (s *Server) refusedMethod(w http.ResponseWriter, r *http.Request) bool {
	var allow string
	switch habits := s.habitsNow(); {
	case r.Header.Get("Mcp-Protocol-Version") >= statelessVersion:
		allow = http.MethodPost
	case habits.refuses(r.Method):
		allow = habits.allow()
	default:
		return false
	}
	w.Header().Set("Allow", allow)
	http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	return true
}

// peek is what routing a POST needs to know about its body.
type peek struct {
	ID     json.RawMessage
	Method string
	Params struct {
		Meta map[string]json.RawMessage
		Name json.RawMessage // tools/call, prompts/get: for Mcp-Name
		URI  json.RawMessage // resources/read
	}
}

// peekBody reads what routing needs of a POST body, and says whether the
// body is valid JSON at all (an object or not: a batch, or a value that
// is no message, goes on to the session, which answers it). It reads with
// jsonrpc's scanner, which agrees with encoding/json on what is valid
// (FuzzClassify): json.Valid then json.Unmarshal went through a 64 MiB
// tools/call three times, at a fifth of the speed. Names match exactly,
// as JSON's do; a member of the wrong type reads as absent. What it
// keeps is copied out of the body (as encoding/json's RawMessage copies):
// routing holds p while the call waits, and a slice would hold the body.
func peekBody(body []byte) (p peek, valid bool) {
	var params []byte
	valid = jsonrpc.Members(body, func(name, v []byte) {
		switch string(name) {
		case "id":
			p.ID = bytes.Clone(v)
		case "method":
			p.Method, _ = jsonrpc.String(v)
		case "params":
			params = v
		}
	})
	if !valid {
		return peek{}, jsonrpc.Valid(body)
	}
	var meta []byte
	jsonrpc.Members(params, func(name, v []byte) {
		switch string(name) {
		case "_meta":
			meta = v
		case "name":
			p.Params.Name = bytes.Clone(v)
		case "uri":
			p.Params.URI = bytes.Clone(v)
		}
	})
	jsonrpc.Members(meta, func(name, v []byte) {
		if p.Params.Meta == nil {
			p.Params.Meta = map[string]json.RawMessage{}
		}
		p.Params.Meta[string(name)] = bytes.Clone(v)
	})
	return p, true
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	if he := checkMediaTypes(r.Header); he != nil {
		writeJSON(w, he.status, errorMessage(nil, he.err))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxBody {
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	p, valid := peekBody(body)
	if !valid {
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &RPCError{Code: -32700, Message: "Parse error"}))
		return
	}
	isRequest := len(p.ID) > 0 && string(p.ID) != "null" && p.Method != ""
	he := checkHeaders(r.Header, &p)
	if he == nil && p.Method == "tools/call" && r.Header.Get("Mcp-Protocol-Version") >= statelessVersion {
		name, _ := jsonString(p.Params.Name)
		he = s.checkParams(r.Header, body, name)
	}
	if he != nil {
		var id json.RawMessage
		if isRequest {
			id = p.ID
		}
		writeJSON(w, he.status, errorMessage(id, he.err))
		return
	}
	isResponse := len(p.ID) > 0 && string(p.ID) != "null" && p.Method == ""
	sid := r.Header.Get(sessionHeader)
	habits := s.habitsNow() // what the recorded server did (http_habits.go)
	sessionless := habits.sessionless()
	var h *httpSession
	switch {
	case isRequest && p.Method == "initialize" && sessionless:
		if h = s.sessionlessSession(r, &p, true); h == nil {
			http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
			return
		}
	case isRequest && p.Method == "initialize":
		if h, err = s.newHTTPSession(false); err != nil {
			http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
			return
		}
	case sid != "":
		if h = s.useHTTPSession(sid, false); h == nil {
			http.Error(w, "Not Found: no such session (it ended, expired, or was never issued)", http.StatusNotFound)
			return
		}
	case statelessEra(r, &p) || sessionless:
		if h = s.sessionlessSession(r, &p, !statelessEra(r, &p)); h == nil {
			http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
			return
		}
	default:
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &RPCError{Code: -32600, Message: "Bad Request: Mcp-Session-Id header is required (send initialize first)"}))
		return
	}
	defer s.doneHTTP(h)
	if h.id != "" && (p.Method == "initialize" || habits.echoesSessionID()) {
		w.Header().Set(sessionHeader, h.id)
	}
	ex := &httpExchange{w: w, finished: make(chan struct{}), log: h.log}
	if h.log != nil {
		ex.wr = &streamWriter{stop: make(chan struct{}), released: make(chan struct{})}
		ex.prime = primes(s.versionOf(r, h)) && habits.primesStreams()
	}
	var target exchange = ex
	sess := h.sess
	if h.conn != "" {
		switch {
		case h.byConn && isRequest && p.Method == "subscriptions/listen":
			l := s.http.hub.add(ex, jsonrpc.Member(body, "params"))
			defer s.http.hub.remove(l)
			target = l
		case isResponse:
			sess = s.waitingSession(h, string(p.ID))
		}
	}
	sess.handle(body, target)
	select {
	case <-ex.finished:
	case <-ex.stopped():
		// A client resuming this stream took it over: it writes the rest.
		ex.detach()
		return
	case <-r.Context().Done():
		if ex.detach() {
			// The answer is an event stream the client may resume
			// (Last-Event-ID): a dropped connection is not a cancellation.
			return
		}
		sess.cancelRequest(string(p.ID))
		<-ex.finished
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.dropped {
		// The close fault: net/http closes the connection without a
		// response, as a server that died mid-request would leave it.
		panic(http.ErrAbortHandler)
	}
	if !ex.started {
		w.WriteHeader(http.StatusAccepted)
	}
	ex.closed = true
	ex.releaseLocked()
}

// versionOf is the protocol version a request speaks: its header, or what
// the session negotiated.
func (s *Server) versionOf(r *http.Request, h *httpSession) string {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v
	}
	h.sess.mu.Lock()
	defer h.sess.mu.Unlock()
	return h.sess.version
}

// statelessEra: a 2026-07-28 request, which comes without a session.
func statelessEra(r *http.Request, p *peek) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessVersion {
		return true
	}
	if p.Method == "server/discover" {
		return true
	}
	_, ok := p.Params.Meta[metaVersionKey]
	return ok
}

func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

// httpExchange answers one POST: JSON when the reply comes alone, an SSE
// stream when messages precede it (or the recording used one). In a session
// with an event log the stream's events are logged and carry ids, and the
// exchange outlives a client that drops the stream: what follows is kept
// for a GET with Last-Event-ID.
type httpExchange struct {
	w        http.ResponseWriter
	log      *eventLog     // nil: sessionless, no ids
	wr       *streamWriter // this connection's claim on the stream
	prime    bool          // start the stream with a priming event
	finished chan struct{}
	dropped  bool // the close fault: break the connection off unanswered
	once     sync.Once

	mu       sync.Mutex
	started  bool
	closed   bool // the handler returned: w is no longer ours
	sse      *sseWriter
	stream   *evStream
	released bool
}

// stopped is closed when a resuming client takes the stream over.
func (e *httpExchange) stopped() <-chan struct{} {
	if e.wr == nil {
		return nil
	}
	return e.wr.stop
}

// startLocked opens the event stream; e.mu is held.
func (e *httpExchange) startLocked() {
	e.sse = startSSE(e.w, http.StatusOK)
	e.started = true
	if e.log == nil {
		return
	}
	e.stream = e.log.openPOST()
	e.log.claimFresh(e.stream, e.wr)
	if e.prime {
		_ = e.sse.prime(eventID(e.stream.id, 0))
	}
}

// writeLocked sends one event of the stream; e.mu is held.
func (e *httpExchange) writeLocked(msg []byte) error {
	if e.stream == nil {
		if e.closed {
			return errQueueClosed
		}
		return e.sse.event("message", "", msg)
	}
	n := e.log.append(e.stream, msg)
	if e.closed {
		return nil // kept for a resume
	}
	return e.sse.event("message", eventID(e.stream.id, n), msg)
}

func (e *httpExchange) send(msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stream == nil {
		switch {
		case e.closed:
			return errQueueClosed
		case e.sse == nil && e.started:
			return errQueueClosed
		case e.sse == nil:
			e.startLocked()
		}
	}
	return e.writeLocked(msg)
}

func (e *httpExchange) reply(msg []byte, sse bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.stream != nil, e.sse != nil:
		return e.writeLocked(msg)
	case e.closed, e.started:
		return errQueueClosed
	case sse: // the client accepts both (checkMediaTypes)
		e.startLocked()
		return e.writeLocked(msg)
	}
	e.started = true
	writeJSON(e.w, http.StatusOK, msg)
	return nil
}

// refuse answers the POST with status and a line of text (or more), if
// nothing of the answer has gone out yet. An expired session's id goes
// with it.
func (e *httpExchange) refuse(status int, expire bool, more *HTTPRefusal) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case expire && e.log == nil:
		// session.refuse answers a 2026-07-28 request before this, and
		// a notification is told no reason: the reason is for a
		// handshake-era request to a server without sessions.
		return errSessionless
	case e.closed, e.started:
		return errStarted
	}
	e.started = true
	if expire {
		e.w.Header().Del(sessionHeader)
	}
	writeRefusal(e.w, status, expire, more)
	return nil
}

// writeRefusal answers a refused POST: status, more's headers but those
// the server owns (mcphttp.OwnedHeader), and more's body, or else a line
// of text/plain naming the fault.
func writeRefusal(w http.ResponseWriter, status int, expire bool, more *HTTPRefusal) {
	h := w.Header()
	if more != nil {
		for k, vs := range more.Header {
			if k = http.CanonicalHeaderKey(k); !mcphttp.OwnedHeader(k) && (k != "Content-Type" || more.Body != nil) {
				h[k] = slices.Clone(vs)
			}
		}
	}
	if more == nil || more.Body == nil {
		http.Error(w, refusal(status, expire), status)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(more.Body)
}

// refusal is the text/plain body of a POST a fault refused.
func refusal(status int, expire bool) string {
	if expire {
		return "Not Found: session expired (mcpmock fault expire-session)"
	}
	return fmt.Sprintf("%s (mcpmock fault http-%d)", http.StatusText(status), status)
}

func (e *httpExchange) drop() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started || e.closed {
		return false
	}
	e.dropped = true
	return true
}

func (e *httpExchange) done() {
	e.once.Do(func() {
		e.mu.Lock()
		if e.stream != nil {
			e.log.finish(e.stream)
		}
		e.mu.Unlock()
		close(e.finished)
	})
}

// detach lets the handler return while the request goes on, if its answer
// is a resumable stream: later events are only logged.
func (e *httpExchange) detach() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stream == nil {
		return false
	}
	e.closed = true
	e.releaseLocked()
	return true
}

// releaseLocked gives up this connection's claim on the stream.
func (e *httpExchange) releaseLocked() {
	if e.stream != nil && !e.released {
		e.released = true
		e.log.release(e.stream, e.wr)
	}
}

// serveGet opens the stream for session-level messages, or resumes a
// stream (Last-Event-ID).
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request) {
	if s.refusedMethod(w, r) {
		return
	}
	if !mcphttp.Accepts(r.Header, "text/event-stream") {
		http.Error(w, "Not Acceptable: GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	sid := r.Header.Get(sessionHeader)
	if sid == "" && s.habitsNow().sessionless() {
		s.serveQuietGet(w, r)
		return
	}
	if sid == "" {
		// Most often a legacy SSE client given the listening line's URL:
		// it shows the status only, hence stderr too.
		s.wrongEndpoint(w, r, http.StatusBadRequest, "Bad Request: Mcp-Session-Id header is required (a GET of /mcp opens a session's stream; a legacy HTTP+SSE client opens GET /sse)")
		return
	}
	h := s.useHTTPSession(sid, false)
	if h == nil {
		http.Error(w, "Not Found: no such session (it ended, expired, or was never issued)", http.StatusNotFound)
		return
	}
	defer s.doneHTTP(h)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		s.serveResume(w, r, h, last)
		return
	}
	st := h.log.get
	wr, ok := h.log.claim(st, false)
	if !ok {
		http.Error(w, "Conflict: this session already has a GET stream", http.StatusConflict)
		return
	}
	defer h.log.release(st, wr)
	habits := s.habitsNow()
	if habits.echoesSessionID() {
		w.Header().Set(sessionHeader, h.id)
	}
	sw := startSSE(w, http.StatusOK)
	n := h.log.sentUpTo()
	if primes(s.versionOf(r, h)) && habits.primesStreams() && sw.prime(eventID(0, n)) != nil {
		return
	}
	h.log.pump(sw, st, n, wr, r.Context().Done())
}

// serveQuietGet answers the GET of a client of a server without sessions
// that kept such GETs open (http_habits.go): an event stream with
// nothing on it (no priming event either: without a session there is
// nothing to resume), until the client leaves or its connection's session
// ends.
func (s *Server) serveQuietGet(w http.ResponseWriter, r *http.Request) {
	h := s.sessionlessSession(r, &peek{}, true)
	if h == nil {
		http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
		return
	}
	defer s.doneHTTP(h)
	startSSE(w, http.StatusOK)
	select {
	case <-r.Context().Done():
	case <-h.sess.ctx.Done():
	}
}
