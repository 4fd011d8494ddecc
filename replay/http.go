package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Streamable HTTP (2025-03-26 … 2025-11-25, and the stateless 2026-07-28
// form) on /mcp, legacy HTTP+SSE on /sse and /message.

// maxBody bounds one POST body.
const maxBody = 64 << 20

// httpState is the Server's HTTP sessions. Session ids count up: a mock is
// deterministic, and it binds loopback.
type httpState struct {
	mu        sync.Mutex
	sessions  map[string]*httpSession
	legacy    map[string]*httpSession
	n         int
	stateless *httpSession
	closed    bool
}

type httpSession struct {
	id   string
	sess *session
	q    *queue // session-level messages for the GET (or legacy SSE) stream

	mu      sync.Mutex
	getOpen bool
}

func (s *Server) newHTTPSession(legacy bool) (*httpSession, error) {
	st := &s.http
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, errQueueClosed
	}
	st.n++
	h := &httpSession{id: fmt.Sprintf("mcpmock-%d", st.n), q: newQueue(s.warnf)}
	h.sess = s.newSession(context.Background(), h.q.push, func() { s.dropHTTPSession(h) })
	m := &st.sessions
	if legacy {
		m = &st.legacy
	}
	if *m == nil {
		*m = map[string]*httpSession{}
	}
	(*m)[h.id] = h
	return h, nil
}

func (s *Server) lookupHTTPSession(id string, legacy bool) *httpSession {
	s.http.mu.Lock()
	defer s.http.mu.Unlock()
	if legacy {
		return s.http.legacy[id]
	}
	return s.http.sessions[id]
}

// statelessSession serves 2026-07-28 clients, which send no session id.
// One cursor is shared by all of them.
func (s *Server) statelessSession() *httpSession {
	st := &s.http
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stateless == nil {
		h := &httpSession{id: "", q: newQueue(nil)}
		h.q.close() // no GET stream in the stateless era: subscriptions/listen carries them
		h.sess = s.newSession(context.Background(), nil, nil)
		h.sess.out = h.sess.toListeners
		st.stateless = h
	}
	return st.stateless
}

func (s *Server) dropHTTPSession(h *httpSession) {
	s.http.mu.Lock()
	if s.http.sessions[h.id] == h {
		delete(s.http.sessions, h.id)
	}
	if s.http.legacy[h.id] == h {
		delete(s.http.legacy, h.id)
	}
	s.http.mu.Unlock()
	h.q.close()
	go h.sess.close() // may be called from one of the session's own goroutines
}

// Close ends every HTTP, SSE and WebSocket session and cancels what they
// have in flight. Stdio sessions end with their ServeStdio call.
func (s *Server) Close() {
	st := &s.http
	st.mu.Lock()
	st.closed = true
	var all []*httpSession
	for _, h := range st.sessions {
		all = append(all, h)
	}
	for _, h := range st.legacy {
		all = append(all, h)
	}
	if st.stateless != nil {
		all = append(all, st.stateless)
	}
	st.sessions, st.legacy, st.stateless = nil, nil, nil
	st.mu.Unlock()
	for _, h := range all {
		h.q.close()
		h.sess.close()
	}
	s.closeWebSockets()
}

// Handler serves Streamable HTTP on /mcp and legacy HTTP+SSE on /sse and
// /message. It checks Origin: only loopback origins (and
// Options.AllowedOrigins) may call it from a browser.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serveStreamable)
	mux.HandleFunc("/sse", s.serveLegacySSE)
	mux.HandleFunc("/message", s.serveLegacyMessage)
	return s.checkOrigin(mux)
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
		h := s.lookupHTTPSession(r.Header.Get(sessionHeader), false)
		if h == nil {
			http.Error(w, "Not Found: no such session", http.StatusNotFound)
			return
		}
		s.dropHTTPSession(h)
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// peek is what routing a POST needs to know about its body.
type peek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxBody {
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	if !json.Valid(body) {
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &RPCError{Code: -32700, Message: "Parse error"}))
		return
	}
	var p peek
	_ = json.Unmarshal(body, &p) // a batch or a non-object: the session answers -32600
	isRequest := len(p.ID) > 0 && string(p.ID) != "null" && p.Method != ""
	sid := r.Header.Get(sessionHeader)
	var h *httpSession
	switch {
	case isRequest && p.Method == "initialize":
		if h, err = s.newHTTPSession(false); err != nil {
			http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
			return
		}
	case sid != "":
		if h = s.lookupHTTPSession(sid, false); h == nil {
			http.Error(w, "Not Found: no such session (it ended, or was never issued)", http.StatusNotFound)
			return
		}
	case statelessEra(r, &p):
		h = s.statelessSession()
	default:
		writeJSON(w, http.StatusBadRequest, errorMessage(nil, &RPCError{Code: -32600, Message: "Bad Request: Mcp-Session-Id header is required (send initialize first)"}))
		return
	}
	if h.id != "" {
		w.Header().Set(sessionHeader, h.id)
	}
	ex := &httpExchange{w: w, canSSE: acceptsSSE(r), finished: make(chan struct{})}
	h.sess.handle(body, ex)
	select {
	case <-ex.finished:
	case <-r.Context().Done():
		h.sess.cancelRequest(string(p.ID))
		<-ex.finished
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if !ex.started {
		w.WriteHeader(http.StatusAccepted)
	}
	ex.closed = true
}

// statelessEra: a 2026-07-28 request, which comes without a session.
func statelessEra(r *http.Request, p *peek) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= "2026-07-28" {
		return true
	}
	if p.Method == "server/discover" {
		return true
	}
	_, ok := p.Params.Meta["io.modelcontextprotocol/protocolVersion"]
	return ok
}

func acceptsSSE(r *http.Request) bool {
	for _, a := range r.Header.Values("Accept") {
		if strings.Contains(a, "text/event-stream") {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

// httpExchange answers one POST: JSON when the reply comes alone, an SSE
// stream when messages precede it (or the recording used one).
type httpExchange struct {
	w        http.ResponseWriter
	canSSE   bool
	finished chan struct{}
	once     sync.Once

	mu      sync.Mutex
	started bool
	closed  bool // the handler returned: w is no longer ours
	sse     *sseWriter
}

func (e *httpExchange) send(msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errQueueClosed
	}
	if !e.canSSE {
		return fmt.Errorf("client does not accept text/event-stream: message dropped")
	}
	if e.sse == nil {
		if e.started {
			return errQueueClosed
		}
		e.sse = startSSE(e.w, http.StatusOK)
		e.started = true
	}
	return e.sse.event("message", msg)
}

func (e *httpExchange) reply(msg []byte, sse bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return errQueueClosed
	case e.sse != nil:
		return e.sse.event("message", msg)
	case e.started:
		return errQueueClosed
	case sse && e.canSSE:
		e.sse = startSSE(e.w, http.StatusOK)
		e.started = true
		return e.sse.event("message", msg)
	}
	e.started = true
	writeJSON(e.w, http.StatusOK, msg)
	return nil
}

func (e *httpExchange) done() { e.once.Do(func() { close(e.finished) }) }

// serveGet opens the stream for session-level messages.
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request) {
	if !acceptsSSE(r) {
		http.Error(w, "Not Acceptable: GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	sid := r.Header.Get(sessionHeader)
	if sid == "" {
		http.Error(w, "Bad Request: Mcp-Session-Id header is required", http.StatusBadRequest)
		return
	}
	h := s.lookupHTTPSession(sid, false)
	if h == nil {
		http.Error(w, "Not Found: no such session", http.StatusNotFound)
		return
	}
	h.mu.Lock()
	if h.getOpen {
		h.mu.Unlock()
		http.Error(w, "Conflict: this session already has a GET stream", http.StatusConflict)
		return
	}
	h.getOpen = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.getOpen = false
		h.mu.Unlock()
	}()
	w.Header().Set(sessionHeader, h.id)
	h.q.pump(startSSE(w, http.StatusOK), "message", r.Context().Done())
}

// serveLegacySSE is the 2024-11-05 transport: the stream comes first and
// names the URL to POST to; every answer travels on the stream.
func (s *Server) serveLegacySSE(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	h, err := s.newHTTPSession(true)
	if err != nil {
		http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
		return
	}
	defer s.dropHTTPSession(h)
	sw := startSSE(w, http.StatusOK)
	if sw.event("endpoint", []byte("/message?sessionId="+h.id)) != nil {
		return
	}
	h.q.pump(sw, "message", r.Context().Done())
}

func (s *Server) serveLegacyMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	h := s.lookupHTTPSession(r.URL.Query().Get("sessionId"), true)
	if h == nil {
		http.Error(w, "Not Found: no such session", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "Bad Request: body unreadable or over 64 MiB", http.StatusBadRequest)
		return
	}
	h.sess.handle(body, connExchange{h.q.push})
	w.WriteHeader(http.StatusAccepted)
}
