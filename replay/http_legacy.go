package replay

import (
	"io"
	"net/http"
	"sync"
)

// The legacy HTTP+SSE transport (2024-11-05): GET /sse opens the stream,
// whose first event names the URL to POST to (/message?sessionId=…);
// every answer travels on the stream.

// serveLegacySSE is the 2024-11-05 transport: the stream comes first and
// names the URL to POST to; every answer travels on the stream.
func (s *Server) serveLegacySSE(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		// A Streamable HTTP client given the legacy URL POSTs here.
		w.Header().Set("Allow", "GET")
		s.wrongEndpoint(w, r, http.StatusMethodNotAllowed, "Method Not Allowed: /sse is the legacy HTTP+SSE event stream, opened with GET; "+endpoints)
		return
	}
	h, err := s.newHTTPSession(true)
	if err != nil {
		http.Error(w, "Service Unavailable: server is closing", http.StatusServiceUnavailable)
		return
	}
	// The stream is the session: it ends with the stream, and the
	// handler returns once its calls are counted (dropHTTPSession closes
	// it off this goroutine), so that a report taken then has them.
	defer h.sess.close()
	defer s.dropHTTPSession(h)
	defer s.doneHTTP(h)
	h.q.attach()
	defer h.q.detach()
	sw := startSSE(w, http.StatusOK)
	if sw.counted("endpoint", []byte("/message?sessionId="+h.id)) == nil {
		h.q.pump(sw, "message", r.Context().Done())
	}
	select {
	case <-h.q.closed: // mcpmock ended the session (Close, expiry, a fault)
	default:
		h.sess.clientLeft(sseGoneWhy)
	}
}

func (s *Server) serveLegacyMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	h := s.useHTTPSession(r.URL.Query().Get("sessionId"), true)
	if h == nil {
		http.Error(w, "Not Found: no such session", http.StatusNotFound)
		return
	}
	defer s.doneHTTP(h)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "Bad Request: body unreadable or over 64 MiB", http.StatusBadRequest)
		return
	}
	ex := &legacyExchange{connExchange: connExchange{h.q.push}}
	h.sess.handle(body, ex)
	ex.answer(w)
}

// legacyExchange is one POST of the legacy transport. Everything the
// session writes goes on the SSE stream, and the POST gets 202 once the
// session has taken its message, as legacy servers answer at once; a
// status fault decided by then (an immediate answer) answers it instead.
// One decided later finds it answered.
type legacyExchange struct {
	connExchange
	mu       sync.Mutex
	status   int
	expire   bool
	more     *HTTPRefusal
	answered bool
}

func (e *legacyExchange) refuse(status int, expire bool, more *HTTPRefusal) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.answered {
		return errAccepted
	}
	e.status, e.expire, e.more = status, expire, more
	return nil
}

func (e *legacyExchange) answer(w http.ResponseWriter) {
	e.mu.Lock()
	e.answered = true
	status, expire, more := e.status, e.expire, e.more
	e.mu.Unlock()
	if status != 0 {
		writeRefusal(w, status, expire, more)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
