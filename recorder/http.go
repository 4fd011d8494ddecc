package recorder

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

const (
	headerSessionID = "Mcp-Session-Id"
	// maxBody bounds one recorded POST or JSON body. Bodies beyond it are
	// still forwarded whole; the cassette gets the first maxBody bytes.
	maxBody = 64 << 20
)

// HTTPProxy is a recording reverse proxy for an MCP server that speaks
// Streamable HTTP or the legacy HTTP+SSE transport.
//
// Every request under the listener is forwarded to the upstream: "/" goes
// to the upstream URL itself, any other path to the same path on the
// upstream host (so a client may use the printed URL, or the upstream's
// own paths, and legacy /message endpoints keep working). Bodies and SSE
// events are forwarded exactly as read, an SSE event as soon as it is
// complete. The one change is the legacy endpoint event: an absolute URI
// pointing at the upstream is rewritten to the proxy so the client keeps
// talking through it. In a compressed stream (gzip, deflate) that means
// the stream is decompressed and compressed anew; see relayEncodedSSE.
//
// Sessions: one per Mcp-Session-Id, one per legacy SSE connection, and one
// per client connection for traffic without a session id (2026-07-28).
//
// Concurrency: ServeHTTP may run on many goroutines; Serve owns them all
// and returns after every handler has finished and every session has
// ended.
type HTTPProxy struct {
	Upstream *url.URL
	Writer   *store.Writer
	// Info is the template of every session's info (Name, Upstream,
	// Recorder); Transport and HTTPSessionID are filled in here.
	Info store.SessionInfo
	// Redact hides credentials in stored headers and paths; nil stores
	// them as they are.
	Redact *HTTPRedactor
	// Transport reaches the upstream. By default an http upstream is
	// reached over one connection per client connection, from the
	// handler's goroutine (upstreamConn), and an https one (or a request
	// served without Serve) over NewUpstreamTransport(false).
	Transport http.RoundTripper
	// Log receives warnings (upstream unreachable, cassette errors).
	Log io.Writer
	// Origins says which browser origins may use the listener.
	Origins OriginPolicy
	// Header is set on every request to the upstream, in place of any the
	// client sent under those names: credentials the client cannot get
	// through the proxy (an OAuth token). It is never recorded.
	Header http.Header

	initOnce sync.Once
	authHint authHint
	// perConnAddr, when set, is the host:port each client connection
	// dials for an upstreamConn of its own (Transport was not set, and
	// the upstream is plain http reached without an HTTP_PROXY).
	perConnAddr string
	mu          sync.Mutex
	bySID       map[string]*httpSession
	// ended remembers sessions that ended by Mcp-Session-Id, so that late
	// traffic naming one (a GET that reconnects, a request racing the
	// DELETE) joins its cassette session instead of starting another.
	ended endedSessions
	// endedLegacy does so for legacy sessions by their endpoint: a client
	// whose SSE stream broke (the upstream died) may still post to it.
	endedLegacy endedSessions
	legacy      map[string]*httpSession // upstream endpoint path?query → session
	conns       map[net.Conn]*connState
	all         map[*httpSession]bool
	gate        shutdownGate
	// started is the last cassette session started, for waitBacklog.
	started atomic.Pointer[store.Session]
	// beforeLongEvent is p.waitBacklog, made once: a method value an
	// SSE reader keeps would cost every stream an allocation.
	beforeLongEvent func()
}

// NewUpstreamTransport returns the transport the proxies use: no automatic
// gzip (it would change the bytes the client gets), connection reuse sized
// for many concurrent clients, and certificate checks unless insecure.
func NewUpstreamTransport(insecure bool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 256
	t.MaxIdleConns = 1024
	if insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // explicit --insecure
	}
	return t
}

func (p *HTTPProxy) init() {
	p.initOnce.Do(func() {
		p.bySID = map[string]*httpSession{}
		p.legacy = map[string]*httpSession{}
		p.conns = map[net.Conn]*connState{}
		p.all = map[*httpSession]bool{}
		p.beforeLongEvent = p.waitBacklog
		if p.Transport == nil {
			// Not when HTTP_PROXY says to go through a proxy: Transport
			// knows how.
			viaProxy, _ := http.ProxyFromEnvironment(&http.Request{URL: p.Upstream})
			if strings.EqualFold(p.Upstream.Scheme, "http") && viaProxy == nil {
				p.perConnAddr = httpHostPort(p.Upstream)
			}
			p.Transport = NewUpstreamTransport(false)
		}
	})
}

// Serve answers on ln until ctx ends, then stops every stream in
// progress, waits for the handlers and ends every open session with
// reason "signal". It returns the listener's error if serving fails.
func (p *HTTPProxy) Serve(ctx context.Context, ln net.Listener) error {
	p.init()
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	front := &frontServer{handler: p, base: base, connContext: p.connContext,
		connClosed: p.connClosed, logf: p.logf}
	err := serveUntil(ctx, front, ln, func() {
		p.gate.close()
		cancel() // ends streams in progress: their upstream requests are cancelled
	})
	front.Wait()
	p.gate.wait()
	p.endAll(interrupted)
	return err
}

// waitBacklog runs before a long body or event is read further: see
// waitBacklog. Any session the proxy started will do to wait with.
func (p *HTTPProxy) waitBacklog() { waitBacklog(p.started.Load()) }

// server is what serveUntil runs: an *http.Server or a frontServer.
type server interface {
	Serve(net.Listener) error
	Close() error
}

// serveUntil runs srv on ln until ctx ends or serving fails, then calls
// stopping (which refuses new work and ends long-lived streams), closes
// srv and waits for Serve to return. A closed server is not an error.
func serveUntil(ctx context.Context, srv server, ln net.Listener, stopping func()) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	stopping()
	srv.Close()
	if err == nil {
		<-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// httpHostPort is the address to dial for an http URL: its port, or 80.
func httpHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// roundTrip sends out to the upstream: over the client connection's own
// upstream connection when there is one, else over Transport.
func (p *HTTPProxy) roundTrip(r, out *http.Request) (*http.Response, error) {
	if cs, _ := r.Context().Value(connKey{}).(*connState); cs != nil && cs.up != nil {
		return cs.up.RoundTrip(out)
	}
	return p.Transport.RoundTrip(out)
}

// hasOwnUpstream says whether r's client connection has an upstreamConn
// of its own, which roundTrip then uses.
func hasOwnUpstream(r *http.Request) bool {
	cs, _ := r.Context().Value(connKey{}).(*connState)
	return cs != nil && cs.up != nil
}

// writeGrace bounds how long a request whose client has gone may still
// take to be written upstream (untilWritten over Transport; an
// upstreamConn bounds its write so itself).
const writeGrace = 5 * time.Second

// untilWritten is the context of a request to the upstream: the client's
// leaving cancels it only once the request has been written (or after
// writeGrace). A client may post a whole message and close at once (a
// script that fires a notification and exits, curl with a short
// --max-time); a server it talked to directly would still read that
// message, so the proxy delivers it, then gives the answer up as the
// client did. release ends the context; call it when the answer is
// done with.
func untilWritten(client context.Context) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(client))
	wrote := make(chan struct{})
	var once sync.Once
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(wrote) }) },
	})
	stop := context.AfterFunc(client, func() {
		grace := time.NewTimer(writeGrace)
		defer grace.Stop()
		select {
		case <-wrote:
		case <-ctx.Done():
		case <-grace.C:
		}
		cancel()
	})
	return ctx, func() { stop(); cancel() }
}

// upstreamRequest is the request r becomes upstream, without a header or
// body yet: r's method and context, and the target as mapped, not
// printed and parsed again as http.NewRequest would (that was a
// measurable share of each round trip).
func upstreamRequest(r *http.Request, target *url.URL) *http.Request {
	u := *target                             // the caller's stays as mapped
	u.Host = strings.TrimSuffix(u.Host, ":") // an empty port, as NewRequest drops it
	out := &http.Request{Method: r.Method, URL: &u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}}
	return out.WithContext(r.Context())
}

// target maps a request URL to the upstream.
func (p *HTTPProxy) target(in *url.URL) *url.URL { return upstreamURL(p.Upstream, in) }

// upstreamURL maps a request to the upstream: "/" is the upstream URL
// itself; any other path goes to that path on the upstream host.
func upstreamURL(upstream, in *url.URL) *url.URL {
	u := *upstream
	if in.Path != "" && in.Path != "/" {
		u.Path, u.RawPath = in.Path, in.RawPath
		u.RawQuery = in.RawQuery
	} else if in.RawQuery != "" {
		u.RawQuery = in.RawQuery
	}
	return &u
}

func endpointKey(u *url.URL) string {
	return u.EscapedPath() + "?" + u.RawQuery
}

// ServeHTTP forwards one request and records its messages.
func (p *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.init()
	if !p.gate.enter(w) {
		return
	}
	defer p.gate.leave()
	if !p.Origins.Permits(r) {
		refuseOrigin(w, r)
		return
	}

	target := p.target(r.URL)
	var body []byte
	if r.Body != nil && r.ContentLength != 0 {
		var err error
		body, err = readBody(r.Body, r.ContentLength, maxBody, p.waitBacklog)
		if err != nil {
			p.refuseBody(w, r, err)
			return
		}
	}
	readAt := time.Now()
	msg := decodedBody(r.Header, body, p.waitBacklog) // what is recorded and classified; body is what is forwarded
	initialize := r.Header.Get(headerSessionID) == "" && bytes.Contains(msg, []byte(`"initialize"`)) &&
		jsonrpc.Classify(msg).Method == "initialize"
	hs := p.sessionForRequest(r, endpointKey(target), initialize)
	reqHeader := p.Redact.Header(r.Header)
	path := p.Redact.PathQuery(target)
	var streamID uint64
	if hs != nil {
		streamID = hs.streams.Add(1)
	}
	var sent sentMessage // none, unless the request carries a message
	if len(msg) > 0 && hs != nil {
		sent = hs.appendSent(readAt, msg, &store.HTTPMeta{
			Method: r.Method, Path: path, RequestHeader: reqHeader, Stream: store.StreamPostBody, StreamID: streamID,
		})
	}

	out := upstreamRequest(r, target)
	if !hasOwnUpstream(r) { // an upstreamConn waits for the write itself
		upCtx, release := untilWritten(r.Context())
		defer release()
		out = out.WithContext(upCtx)
	}
	out.Header = forwardHeader(r.Header)
	p.setOwnHeader(out)
	switch {
	case len(body) == maxBody && r.ContentLength != maxBody:
		// Larger than we record: the rest streams on, unrecorded.
		out.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		out.ContentLength = r.ContentLength
	case body != nil:
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := p.roundTrip(r, out)
	if err != nil {
		if r.Context().Err() != nil {
			sent.answered(0, nil, store.NoteLeftBeforeAnswer)
			return // nothing to answer
		}
		if hs == nil { // a GET without a session id: kept where a refused one is
			hs = p.connSession(r)
			streamID = hs.streams.Add(1)
		}
		x := &exchange{p: p, w: w, r: r, target: target, hs: hs, streamID: streamID, sent: sent, readAt: readAt,
			base: store.HTTPMeta{Method: r.Method, Path: path, RequestHeader: reqHeader}}
		x.badGateway(msg, err)
		return
	}
	defer resp.Body.Close()
	p.authHint.check(resp, p.Info.Upstream, p.Header, p.logf)

	if hs == nil && r.Method == http.MethodGet && !isEventStream(resp.Header) && r.Header.Get(headerSessionID) == "" {
		// A GET without a session id that got no stream (a server
		// without sessions refuses it with 405): on record in its
		// connection's session, as that connection's POSTs are.
		hs = p.connSession(r)
		streamID = hs.streams.Add(1)
	}
	if sid := resp.Header.Get(headerSessionID); sid != "" && r.Header.Get(headerSessionID) == "" && hs != nil {
		p.bind(hs, sid)
	} else if initialize {
		p.adopt(r, hs)
	}
	copyHeader(w.Header(), resp.Header)
	x := &exchange{p: p, w: w, r: r, resp: resp, target: target, hs: hs, streamID: streamID, sent: sent, readAt: readAt,
		base: store.HTTPMeta{Method: r.Method, Path: path, Status: resp.StatusCode,
			RequestHeader: reqHeader, ResponseHeader: p.Redact.Header(resp.Header)}}
	if isEventStream(resp.Header) {
		x.relaySSE()
		return
	}
	x.relayBody()
	if r.Method == http.MethodDelete && r.Header.Get(headerSessionID) != "" && resp.StatusCode/100 == 2 && hs != nil {
		hs.end(store.EndInfo{Reason: store.EndClosed})
	}
}

// exchange is one forwarded request and its response.
type exchange struct {
	p        *HTTPProxy
	w        http.ResponseWriter
	r        *http.Request
	resp     *http.Response
	target   *url.URL
	hs       *httpSession
	streamID uint64
	base     store.HTTPMeta
	sent     sentMessage // the client's message the request carried, if any
	// readAt is when mcpspy had read the request (its body, if any).
	readAt time.Time
}

// answeredBare records what answered the request when that answer is no
// message: on the client's message, or, when the request carried none
// either (a DELETE, a refused GET), in its session's info.
func (x *exchange) answeredBare(stream, note string) {
	if x.sent.recorded() {
		x.sent.answered(x.base.Status, x.base.ResponseHeader, note)
		return
	}
	if x.hs != nil {
		x.hs.keepBare(store.BareExchange{Time: x.readAt, HTTP: *x.meta(stream), Note: note})
	}
}

func (x *exchange) meta(stream string) *store.HTTPMeta {
	m := x.base
	m.Stream = stream
	m.StreamID = x.streamID
	return &m
}

// relayBody forwards a plain response. A non-empty body is a message
// (or a malformed one, which the store marks) except on 202, which by the
// spec carries none; it is recorded before it is forwarded.
func (x *exchange) relayBody() {
	body, err := readBody(x.resp.Body, x.resp.ContentLength, maxBody, x.p.waitBacklog)
	readAt := time.Now()
	hs := x.hs
	if x.notOffered() {
		// A GET or DELETE the server does not take: 405 is the spec's
		// way to say it offers no stream of its own, or lets no client
		// end its session, a lawful answer and no error of the session.
		// Its page carries no message: it is kept as a bare exchange,
		// its beginning in the note.
		x.answeredBare("", refusalNote(decodedBody(x.resp.Header, body, nil)))
	} else if len(body) > 0 && x.resp.StatusCode != http.StatusAccepted && x.r.Method != http.MethodHead {
		if hs == nil && x.r.Method == http.MethodPost {
			hs = x.p.connSession(x.r)
		}
		plain := decodedBody(x.resp.Header, body, x.p.waitBacklog)
		if hs != nil {
			hs.append(store.S2C, readAt, plain, x.meta(store.StreamJSON))
		}
		if x.sent.refusedBy(x.resp.StatusCode, plain) {
			x.sent.answered(x.base.Status, x.base.ResponseHeader, refusalNote(plain))
		}
	} else {
		x.answeredBare("", "")
	}
	x.w.WriteHeader(x.resp.StatusCode)
	if _, werr := x.w.Write(body); werr != nil {
		return
	}
	if err == nil && len(body) == maxBody { // larger than we record: pass the rest on
		_, err = io.Copy(x.w, x.resp.Body)
	}
	x.abortIfCut(err)
}

// notOffered says whether the request is a GET or DELETE answered with
// 405 Method Not Allowed.
func (x *exchange) notOffered() bool {
	return x.resp.StatusCode == http.StatusMethodNotAllowed && (x.r.Method == http.MethodGet || x.r.Method == http.MethodDelete)
}

// abortIfCut ends the client's response as broken when the upstream's
// broke off (err is a read error other than the body's end): what came is
// flushed, then the connection closes without the chunked terminator,
// so that the client cannot take a cut answer for a whole one. It is
// net/http's way, panic(http.ErrAbortHandler), which the front knows too.
func (x *exchange) abortIfCut(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	_ = http.NewResponseController(x.w).Flush()
	panic(http.ErrAbortHandler)
}

// refuseBody answers a request whose body could not be read. A client
// that went away gets nothing (the handler aborts, so that no answer is
// made up); one whose body is malformed (a bad chunk size, shorter than
// its Content-Length) gets 400, as the upstream never saw the request.
func (p *HTTPProxy) refuseBody(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		panic(http.ErrAbortHandler)
	}
	msg := fmt.Sprintf("mcpspy: the request body of %s %s could not be read: %v", r.Method, r.URL.Path, err)
	p.logf("%s", msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close") // where the next request starts is lost
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(rpcErrorBody("null", -32600, msg))
}

// badGateway answers a request the upstream could not be asked, and
// records that mcpspy answered it so: on the client's message, or, for a
// request that carried none (a GET, a DELETE), as a bare exchange of its
// session. A DELETE so answered ends its session all the same: the
// client has let go of it and sends nothing more under its id.
func (x *exchange) badGateway(reqBody []byte, err error) {
	x.p.badGateway(x.w, reqBody, err, func(note string) {
		x.base.Status, x.base.ResponseHeader = http.StatusBadGateway, x.p.Redact.Header(x.w.Header())
		x.answeredBare("", note)
	})
	if x.r.Method == http.MethodDelete && x.r.Header.Get(headerSessionID) != "" {
		x.hs.end(store.EndInfo{Reason: store.EndClosed,
			Error: "the client's DELETE got mcpspy's 502: the upstream was unreachable and never saw it"})
	}
}

// badGateway answers with 502 and a JSON-RPC error (for reqBody's id)
// that names the upstream and err. record, if not nil, is given the note
// that says so once the answer's headers are set, before they are sent.
func (p *HTTPProxy) badGateway(w http.ResponseWriter, reqBody []byte, err error, record func(note string)) {
	id := "null"
	if s := jsonrpc.Classify(reqBody); s.ID != "" {
		id = s.ID
	}
	msg := fmt.Sprintf("mcpspy: upstream %s is unreachable: %v", p.Info.Upstream, err)
	p.logf("%s", msg)
	w.Header().Set("Content-Type", "application/json")
	if record != nil {
		record("answered by mcpspy, not the upstream: " + strings.TrimPrefix(msg, "mcpspy: "))
	}
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write(rpcErrorBody(id, -32603, msg))
}

// rpcErrorBody is a JSON-RPC error response the proxy itself answers with.
func rpcErrorBody(id string, code int, msg string) []byte {
	m, _ := json.Marshal(msg)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
}

func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// hopHeaders belong to one connection and are not forwarded (RFC 9110
// 7.6.1), like the headers the Connection header names.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func forwardHeader(in http.Header) http.Header {
	out := in.Clone()
	dropHop(out)
	return out
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	dropHop(dst)
}

func dropHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}
