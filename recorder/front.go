package recorder

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// frontServer is the HTTP/1.1 server in front of the HTTP proxy. It does
// what net/http's server would for this one handler, with less in the
// way of each round trip: the handler runs on the connection's goroutine,
// the response goes out through one buffered writer, and a second
// goroutine per connection reads ahead from the client so that a client
// that leaves is noticed at once (its request's context is cancelled,
// which closes the upstream connection). net/http's server notices the
// same with a read it starts and aborts around every request; at one
// client that bookkeeping was most of what separated mcpspy from a bare
// TCP relay (BenchmarkHTTPRoundTrip).
//
// It speaks HTTP/1.x only (no h2c, no upgrades: the HTTP proxy forwards
// neither). Requests with a malformed head get 400 and the connection is
// closed, as net/http does.
type frontServer struct {
	handler http.Handler
	base    context.Context
	// connContext and connClosed bracket each connection, as
	// http.Server's ConnContext and ConnState(StateClosed) would.
	connContext func(context.Context, net.Conn) context.Context
	connClosed  func(net.Conn)
	// logf reports a handler's panic; the connection closes, the rest
	// of the proxy goes on (as net/http's server does).
	logf func(format string, a ...any)

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool

	serving sync.WaitGroup // one per connection's goroutine; see Wait
}

const (
	// frontMaxHeader bounds a request head, as net/http's default does.
	frontMaxHeader = 1 << 20
	// frontDiscard is how much of a request body the handler left unread
	// is skipped to keep the connection; past it the connection closes.
	frontDiscard = 256 << 10
)

// Serve accepts connections on ln until Close is called or Accept fails
// for good; after Close it returns http.ErrServerClosed.
func (s *frontServer) Serve(ln net.Listener) error {
	defer ln.Close()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.ln = ln
	s.conns = map[net.Conn]struct{}{}
	s.mu.Unlock()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: wait and try again,
			// as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if !s.track(c) {
			c.Close()
			return http.ErrServerClosed
		}
		s.serving.Add(1)
		go s.serveConn(c)
	}
}

// Wait waits, once Close has closed the connections, for their
// goroutines to end, connClosed being the last thing each does. Without
// it, a connection could end its session after the proxy had closed the
// cassette.
func (s *frontServer) Wait() { s.serving.Wait() }

func (s *frontServer) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *frontServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// Close stops accepting and closes every connection, like
// http.Server.Close: handlers see their writes fail and their contexts
// end. It does not wait for them.
func (s *frontServer) Close() error {
	s.mu.Lock()
	s.closed = true
	ln, conns := s.ln, s.conns
	s.conns = nil
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for c := range conns {
		c.Close()
	}
	return nil
}

func (s *frontServer) serveConn(c net.Conn) {
	ctx := s.base
	if s.connContext != nil {
		ctx = s.connContext(ctx, c)
	}
	fc := &frontConn{c: c, in: make(chan frontChunk), gone: make(chan struct{}), stop: make(chan struct{})}
	go fc.readAhead()
	defer func() {
		// http.ErrAbortHandler is a handler ending a response it cannot
		// finish (the upstream's broke off): close, and say nothing.
		if v := recover(); v != nil && v != http.ErrAbortHandler && s.logf != nil {
			s.logf("mcpspy: panic serving %s: %v\n%s", c.RemoteAddr(), v, debug.Stack())
		}
		fc.cancelWatched() // a handler that panicked left its request's context
		close(fc.stop)
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		if s.connClosed != nil {
			s.connClosed(c)
		}
		s.serving.Done()
	}()
	br := bufio.NewReaderSize(fc, 4<<10)
	bw := bufio.NewWriterSize(c, 4<<10)
	remote := c.RemoteAddr().String()
	for {
		fc.setLimit(frontMaxHeader + 4<<10) // bufio may read a little past the head
		req, err := http.ReadRequest(br)
		tooLarge := fc.limitHit()
		fc.setLimit(-1)
		if err != nil {
			if !errors.Is(err, io.EOF) && !fc.isGone() {
				status := "400 Bad Request"
				if tooLarge {
					status = "431 Request Header Fields Too Large"
				}
				writeFrontError(bw, status, true)
				fc.closeGently()
			}
			return
		}
		if refusal := frontRefusal(req); refusal != "" {
			writeFrontError(bw, refusal, req.Method != http.MethodHead)
			fc.closeGently()
			return
		}
		req.RemoteAddr = remote
		rctx, cancel := context.WithCancel(ctx)
		if !fc.watch(cancel) {
			// The client has gone already. One that wrote a whole request
			// with a body and left at once has still sent its message, and
			// a server it talked to directly would read it: the handler
			// passes it on (when the body is whole) and no answer goes back.
			cancel()
			if req.ContentLength == 0 {
				return
			}
		}
		req = req.WithContext(rctx)
		if req.ContentLength != 0 && strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
			// The handler reads the body at once, so ask for it now.
			_, _ = bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
			_ = bw.Flush()
		}
		w := &frontResponse{bw: bw, header: http.Header{}, method: req.Method,
			http10: !req.ProtoAtLeast(1, 1), closeAfter: req.Close}
		s.handler.ServeHTTP(w, req)
		werr := w.finish()
		fc.watch(nil)
		cancel()
		if werr != nil || w.closeAfter || !drainBody(req.Body) {
			return
		}
	}
}

// frontRefusal is the status a request gets without reaching the handler,
// or "" when it may.
func frontRefusal(req *http.Request) string {
	switch {
	case req.ProtoMajor != 1:
		return "505 HTTP Version Not Supported"
	case req.ProtoAtLeast(1, 1) && len(req.Header["Host"]) == 0 && req.Host == "":
		return "400 Bad Request" // RFC 9112 3.2: Host is required
	case req.Header.Get("Expect") != "" && !strings.EqualFold(req.Header.Get("Expect"), "100-continue"):
		return "417 Expectation Failed"
	}
	return ""
}

// writeFrontError answers a request the server refuses and is about to
// close the connection on. The status is repeated as a body for people
// reading it, but never in answer to HEAD, whose answer has none.
func writeFrontError(bw *bufio.Writer, status string, withBody bool) {
	fmt.Fprintf(bw, "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n", status)
	if withBody {
		_, _ = bw.WriteString(status)
	}
	_ = bw.Flush()
}

// drainBody skips what the handler left of a request body, so that the
// next request can be read; false when too much was left.
func drainBody(body io.ReadCloser) bool {
	if body == nil || body == http.NoBody {
		return true
	}
	n, err := io.CopyN(io.Discard, body, frontDiscard+1)
	return n <= frontDiscard && errors.Is(err, io.EOF)
}

// frontConn is one client connection. Its readAhead goroutine is the only
// reader of c; the serving goroutine reads what it hands over (Read).
//
// Reading ahead is how a client that leaves is noticed while its request
// is in the handler: readAhead's Read returns the error at once and it
// cancels the watched request. HTTP/1.1 clients do not send a second
// request before the first is answered, so the read ahead is usually
// just the next request, taken in early.
type frontConn struct {
	c    net.Conn
	in   chan frontChunk // chunks read from c
	gone chan struct{}   // closed when c's read fails; err says why
	stop chan struct{}   // closed when the serving goroutine is done
	err  error

	cur   []byte // what is left of the chunk being read
	buf   *[]byte
	limit int64 // bytes Read may still return; < 0 for no limit
	hit   bool  // the limit stopped a Read

	mu     sync.Mutex
	cancel context.CancelFunc // the request in the handler, if any
	ended  bool
}

// frontChunk is one read from the client: (*buf)[:n]. Buffers go back
// to frontBufs once the serving goroutine has used them up.
type frontChunk struct {
	buf *[]byte
	n   int
}

var frontBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

func (fc *frontConn) readAhead() {
	for {
		buf := frontBufs.Get().(*[]byte)
		n, err := fc.c.Read(*buf)
		if n > 0 {
			select {
			case fc.in <- frontChunk{buf, n}:
			case <-fc.stop:
				return
			}
		} else {
			frontBufs.Put(buf)
		}
		if err != nil {
			fc.mu.Lock()
			fc.err, fc.ended = err, true
			cancel := fc.cancel
			fc.mu.Unlock()
			close(fc.gone)
			if cancel != nil {
				cancel()
			}
			return
		}
	}
}

// closeGently half-closes the connection after an error answer and
// skips what the client still sends, for at most half a second, before
// the full close: closing with unread bytes would reset the connection,
// and the client could lose the answer. net/http does the same.
func (fc *frontConn) closeGently() {
	if hc, ok := fc.c.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
	}
	timer := time.NewTimer(500 * time.Millisecond)
	defer timer.Stop()
	for {
		select {
		case ch := <-fc.in:
			frontBufs.Put(ch.buf)
		case <-fc.gone:
			return
		case <-timer.C:
			return
		}
	}
}

// watch sets the cancel function of the request now in the handler (nil
// when none is). It returns false if the client is already gone.
func (fc *frontConn) watch(cancel context.CancelFunc) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.cancel = cancel
	return !fc.ended
}

// cancelWatched cancels the request in the handler, if any.
func (fc *frontConn) cancelWatched() {
	fc.mu.Lock()
	cancel := fc.cancel
	fc.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (fc *frontConn) isGone() bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.ended
}

func (fc *frontConn) setLimit(n int64) { fc.limit, fc.hit = n, false }
func (fc *frontConn) limitHit() bool   { return fc.hit }

// Read gives the serving goroutine what readAhead read. A chunk is sent
// only when taken, so once gone is closed every chunk has been taken.
func (fc *frontConn) Read(p []byte) (int, error) {
	if fc.limit == 0 {
		fc.hit = true
		return 0, io.EOF
	}
	if len(fc.cur) == 0 {
		if fc.buf != nil {
			frontBufs.Put(fc.buf)
			fc.buf = nil
		}
		select {
		case ch := <-fc.in:
			fc.cur, fc.buf = (*ch.buf)[:ch.n], ch.buf
		case <-fc.gone:
			return 0, fc.err
		}
	}
	if fc.limit > 0 && int64(len(p)) > fc.limit {
		p = p[:fc.limit]
	}
	n := copy(p, fc.cur)
	fc.cur = fc.cur[n:]
	if fc.limit > 0 {
		fc.limit -= int64(n)
	}
	return n, nil
}

// frontResponse is the http.ResponseWriter of frontServer. The head goes
// out with the first body bytes or flush; a body without a
// Content-Length is chunked (HTTP/1.1) or ends with the connection
// (HTTP/1.0). Nothing is added to the handler's headers but the framing.
type frontResponse struct {
	bw          *bufio.Writer
	header      http.Header
	method      string
	http10      bool
	closeAfter  bool
	status      int
	headWritten bool
	noBody      bool
	chunked     bool
	declared    int64 // the Content-Length the handler set, or -1
	written     int64
	err         error
}

func (w *frontResponse) Header() http.Header { return w.header }

func (w *frontResponse) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return // informational answers are not relayed; the first status stands
	}
	w.status = code
}

func (w *frontResponse) writeHead() {
	if w.headWritten {
		return
	}
	w.headWritten = true
	if w.status == 0 {
		w.status = http.StatusOK
	}
	h := w.header
	w.noBody = w.method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified
	w.declared = -1
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.declared = n
		} else {
			h.Del("Content-Length") // not a length a client could frame by
		}
	}
	if !w.noBody && w.declared < 0 {
		if w.http10 {
			w.closeAfter = true
		} else {
			w.chunked = true
		}
	}
	switch {
	case w.closeAfter:
		h.Set("Connection", "close")
	case w.http10: // an HTTP/1.0 client keeps the connection only if told
		h.Set("Connection", "keep-alive")
	}
	if w.chunked {
		h.Set("Transfer-Encoding", "chunked")
	}
	proto := "HTTP/1.1"
	if w.http10 {
		proto = "HTTP/1.0"
	}
	fmt.Fprintf(w.bw, "%s %d %s\r\n", proto, w.status, http.StatusText(w.status))
	if err := h.Write(w.bw); err != nil {
		w.err = err
	}
	_, _ = w.bw.WriteString("\r\n")
}

func (w *frontResponse) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writeHead()
	if w.noBody || len(p) == 0 {
		return len(p), nil
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		// More than the upstream announced: the rest cannot be framed.
		n, _ := w.bw.Write(p[:w.declared-w.written])
		w.written += int64(n)
		w.err = http.ErrContentLength
		return n, w.err
	}
	w.written += int64(len(p))
	if w.chunked {
		var size [18]byte // hex length and CRLF, without an allocation per event
		_, _ = w.bw.Write(append(strconv.AppendInt(size[:0], int64(len(p)), 16), '\r', '\n'))
	}
	n, err := w.bw.Write(p)
	if w.chunked && err == nil {
		_, err = w.bw.WriteString("\r\n")
	}
	if err != nil {
		w.err = err
	}
	return n, err
}

// FlushError sends what is buffered; http.ResponseController finds it.
func (w *frontResponse) FlushError() error {
	if w.err != nil {
		return w.err
	}
	w.writeHead()
	if err := w.bw.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

// finish ends the response after the handler has returned. A body
// shorter than its Content-Length (the upstream broke off) ends the
// connection, so that the client sees it cut instead of reading the next
// answer as its rest.
func (w *frontResponse) finish() error {
	w.writeHead()
	if w.chunked && w.err == nil {
		_, _ = w.bw.WriteString("0\r\n\r\n")
	}
	if !w.noBody && w.declared >= 0 && w.written < w.declared {
		w.closeAfter = true
	}
	return w.FlushError()
}
