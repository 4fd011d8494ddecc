package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// StreamableClient is the client end of one Streamable HTTP session, for
// the parts of mcptape that talk to a real server themselves (mcpspy
// rerun, mcpmock's fallback):
//
//   - a POST per message, answered as JSON or as an event stream, which is
//     read on a goroutine of its own so that a long call holds up nothing;
//   - Mcp-Session-Id and MCP-Protocol-Version sent as a client must, and a
//     2026-07-28 message's Mcp-Method, Mcp-Name and Mcp-Param-* headers;
//   - once the session is initialized, the GET stream on which the server
//     sends what belongs to no request;
//   - a stream that ends before its answer, resumed with Last-Event-ID
//     (streamable_resume.go);
//   - a DELETE at the end.
//
// A server of the 2024-11-05 HTTP+SSE transport is told apart as the spec
// tells clients to (2025-03-26, backwards compatibility): when the POST
// of the initialize request is refused with a 4xx, a GET of the same URL
// that opens an event stream naming an endpoint shows a legacy server,
// and the session goes on over that transport (LegacyClient), the
// initialize sent again there. The refused POST is not tapped: it was a
// question about the transport, not a message of the session.
//
// Every message is tapped as the HTTP recorder keeps it, without the
// request headers (which may carry the credentials of Header).
//
// Post and Abort may be called from many goroutines at once; Close once,
// last.
type StreamableClient struct {
	o    StreamableOptions
	path string // the URL's path and query as recorded

	// ctx ends at Close: the streams still open end with it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // readers of the streams

	mu      sync.Mutex
	sid     string // Mcp-Session-Id, once the server gave one
	version string // the negotiated protocol version, for the header
	initID  string // the initialize request's id
	stream  uint64 // the last recorded stream's number
	getOnce sync.Once
	aborts  map[string]context.CancelFunc // request id → what closes its POST
	closing bool                          // Close has begun: no stream is resumed
	legacy  *LegacyClient                 // set once the server turned out to be legacy

	// long is held while a long JSON answer (frame.LongLine and more) is
	// read and tapped: answers to requests in flight together are read
	// one at a time, each after the store took the last, as on one stdio
	// pipe, not all at once with a copy each in the store's backlog.
	long sync.Mutex
}

// StreamableOptions configure NewStreamableClient.
type StreamableOptions struct {
	URL *url.URL
	// Header is added to every request; it is not recorded.
	Header http.Header
	// Client reaches URL. Default: UpstreamClient().
	Client *http.Client
	Tap    Tap
	// Redactor hides secrets in the recorded paths; nil records them as
	// they are.
	Redactor *HTTPRedactor
	// Receive gets each message the server sends, after it is tapped,
	// with the id of the request whose POST it came in answer to ("" on
	// the GET stream, or for a batch).
	Receive func(frame []byte, related string)
	// Failed, if set, is told when a request will get no answer: its
	// event stream ended before the answer and could not be resumed.
	Failed func(id string, err error)
	// Note, if set, is told what went wrong that fails no request: the
	// GET stream lost.
	Note func(string)
	// Timeout bounds the wait for the GET stream to open (the next
	// message may depend on what comes on it), and for a legacy server's
	// endpoint event, and a quarter of it the pause before each resume.
	// Default 10 s.
	Timeout time.Duration
	// OnLegacy, if set, is told when the server turned out to speak the
	// 2024-11-05 transport, before any message of the session is tapped
	// over it. done closes when the server ends its event stream, and
	// with it the session.
	OnLegacy func(done <-chan struct{})
}

// UpstreamClient is an HTTP client for a real server over the proxies'
// transport (NewUpstreamTransport): the bytes as the server sent them.
func UpstreamClient() *http.Client {
	return &http.Client{Transport: NewUpstreamTransport(false)}
}

// NewStreamableClient returns a client for the endpoint o.URL. Nothing is
// sent until the first Post.
func NewStreamableClient(o StreamableOptions) *StreamableClient {
	if o.Client == nil {
		o.Client = UpstreamClient()
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	// Not a caller's context: Close still has a DELETE to send.
	ctx, cancel := context.WithCancel(context.Background())
	return &StreamableClient{o: o, path: recordedPath(o.Redactor, o.URL), ctx: ctx, cancel: cancel, aborts: map[string]context.CancelFunc{}}
}

// Refusal is an HTTP answer of 300 or more to a POST that carries no
// JSON-RPC answer (a 404, a proxy's error page): the status, the start of
// the body, and the response headers as they came (not redacted: they are
// for passing on live, as mcpmock's fallback does, never for disk).
type Refusal struct {
	Status int
	Body   []byte // as it came (its start: up to a large event's size)
	Header http.Header
	// SessionGone: a 404 to a POST that carried the session's
	// Mcp-Session-Id, the spec's word for a session the server no longer
	// knows.
	SessionGone bool
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("HTTP %d: %.200s", r.Status, bytes.TrimSpace(r.Body))
}

// Post taps frame and POSTs it, and takes in what the server answers. It
// returns once the answer is read (JSON) or its event stream is open
// (read on). extra holds headers only a 2026-07-28 message carries (its
// Mcp-Param-*): they are added when frame is one. written, if not nil, is
// called once the POST has been written, before its answer (which a long
// call may keep a while), or when it could not be.
//
// A refusal is a *Refusal; a JSON-RPC error the server sends with a 4xx
// status is an answer, not a refusal, when it names the request.
func (c *StreamableClient) Post(frame []byte, extra http.Header, written func()) error {
	var once sync.Once
	wrote := func() {
		if written != nil {
			once.Do(written)
		}
	}
	defer wrote() // also when it could not be written
	c.mu.Lock()
	legacy, firstInit := c.legacy, c.initID == "" && c.sid == ""
	c.mu.Unlock()
	if legacy != nil {
		return legacy.Post(frame)
	}
	sum := jsonrpc.Classify(frame)
	related := ""
	ctx, done := c.ctx, func() {}
	if sum.Kind == jsonrpc.Request {
		related = sum.ID
		ctx, done = c.abortable(sum.ID)
	}
	if written != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote() },
		})
	}
	req, stream, err := c.newRequest(ctx, http.MethodPost, "application/json, text/event-stream", frame)
	if err != nil {
		done()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if mcphttp.SetStateless(req.Header, frame, sum.Method) {
		for k, vs := range extra {
			req.Header[k] = vs
		}
	}
	probe := sum.Kind == jsonrpc.Request && sum.Method == "initialize" && firstInit
	if probe {
		c.mu.Lock()
		c.initID = sum.ID
		c.mu.Unlock()
	}
	waitToSend(c.o.Tap, frame)
	at := time.Now()
	sentMeta := store.HTTPMeta{Method: http.MethodPost, Path: c.path, Stream: store.StreamPostBody, StreamID: stream}
	var sentSeq uint64
	tapSent := func() {
		m := sentMeta // the Tap owns what it is given
		sentSeq = c.o.Tap.Append(store.C2S, at, frame, &m)
	}
	if !probe {
		tapSent()
	}
	resp, err := c.o.Client.Do(req)
	if probe {
		if err == nil && resp.StatusCode >= 400 && resp.StatusCode < 500 {
			if legacy := c.tryLegacy(); legacy != nil {
				resp.Body.Close()
				done()
				return legacy.Post(frame)
			}
		}
		tapSent()
	}
	if err != nil {
		done()
		return err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		if c.sid == "" {
			c.sid = sid
		}
		c.mu.Unlock()
	}
	meta := store.HTTPMeta{Method: http.MethodPost, Path: c.path, Status: resp.StatusCode, StreamID: stream,
		ResponseHeader: c.o.Redactor.Header(resp.Header)}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		done()
		resp.Body.Close()
		tapAnswered(c.o.Tap, sentSeq, sentMeta, resp.StatusCode, meta.ResponseHeader, "")
		if sum.Method == "notifications/initialized" {
			c.getOnce.Do(c.openGetStream)
		}
		return nil
	case resp.StatusCode == http.StatusOK && isEventStream(resp.Header):
		meta.Stream = store.StreamPostSSE
		w := &watch{post: true, ctx: ctx, related: related, pending: requestIDs(frame, sum),
			// 2026-07-28 has no resumption; the handshake era's version
			// header is absent (2025-03-26) or an earlier date.
			resumable: req.Header.Get("MCP-Protocol-Version") < "2026-07-28"}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer done()
			c.follow(resp.Body, meta, w)
		}()
		return nil
	}
	defer done()
	unlock := func() {}
	defer func() { unlock() }() // a long answer not handed on
	body, err := readBody(resp.Body, resp.ContentLength, sse.DefaultMaxEvent, func() {
		c.long.Lock()
		unlock = sync.OnceFunc(c.long.Unlock)
		c.waitStore()
	})
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading its answer: %w", err)
	}
	meta.Stream = store.StreamJSON
	t := bytes.TrimSpace(body)
	isObject := len(t) > 0 && t[0] == '{'
	switch {
	case isObject && (resp.StatusCode < 300 || related != "" && answers(t, related)):
		// (A -32020 header mismatch comes with a 400.) The next long
		// answer may be read once this one is tapped, not only once
		// the receiver, which may send, is done with it.
		c.tap(t, meta)
		unlock()
		c.o.Receive(t, related)
		return nil
	case resp.StatusCode >= 300:
		// A refusal: its body, if any, is no answer (an error with a null
		// id, server-everything's 400 to a request before initialize, or
		// text), and is kept as the frame it is, as the HTTP recorder
		// keeps it; the status goes on the message refused.
		tapAnswered(c.o.Tap, sentSeq, sentMeta, resp.StatusCode, meta.ResponseHeader, refusalNote(body))
		tapRefusalBody(c.o.Tap, body, meta)
		return &Refusal{Status: resp.StatusCode, Body: body, Header: resp.Header,
			SessionGone: resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != ""}
	}
	return nil
}

// waitStore runs before a long answer is read further, as the HTTP
// recorder waits for its store (waitTap).
func (c *StreamableClient) waitStore() { waitTap(c.o.Tap) }

// answers says whether frame is the response or error to request id.
func answers(frame []byte, id string) bool {
	s := jsonrpc.Classify(frame)
	return (s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error) && s.ID == id
}

// newRequest makes a request with the headers every request of the
// session carries: the caller's, and once known the session id and the
// protocol version. It numbers the stream it opens.
func (c *StreamableClient) newRequest(ctx context.Context, method, accept string, body []byte) (*http.Request, uint64, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.o.URL.String(), rd)
	if err != nil {
		return nil, 0, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mcphttp.SetSession(req.Header, c.o.Header, c.sid, c.version)
	c.stream++
	return req, c.stream, nil
}

// tryLegacy GETs the URL as a 2024-11-05 client would, and returns the
// legacy session it opened, or nil when the server is no such server.
func (c *StreamableClient) tryLegacy() *LegacyClient {
	l, err := DialLegacy(LegacyOptions{URL: c.o.URL, Header: c.o.Header, Client: c.o.Client, Timeout: c.o.Timeout,
		Tap: c.o.Tap, Redactor: c.o.Redactor, Receive: func(f []byte) { c.o.Receive(f, "") }})
	if err != nil {
		return nil
	}
	c.mu.Lock()
	c.legacy = l
	c.mu.Unlock()
	if c.o.OnLegacy != nil {
		c.o.OnLegacy(l.Done())
	}
	return l
}

// abortable is the context of the POST of request id, which Abort
// cancels, and what forgets it once its answer is in.
func (c *StreamableClient) abortable(id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.aborts[id] = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.aborts, id)
		c.mu.Unlock()
		cancel()
	}
}

// Abort closes the POST of request id, its response stream with it: in
// 2026-07-28, how a client cancels a request. It says whether the request
// was still open.
func (c *StreamableClient) Abort(id string) bool {
	c.mu.Lock()
	cancel := c.aborts[id]
	c.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// openGetStream opens the stream for what the server sends outside any
// request and waits, at most Timeout, until the server has answered the
// GET: the next message may depend on what comes there
// (server-everything asks for roots before get-roots-list).
func (c *StreamableClient) openGetStream() {
	opened := make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.listen(opened)
	}()
	t := time.NewTimer(c.o.Timeout)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	}
}

// listen reads the session's GET stream, if the server has one (a 405
// says it has not, and is no error), until it ends or the session does.
// It closes opened once the server has answered the GET, or failed to.
func (c *StreamableClient) listen(opened chan<- struct{}) {
	var once sync.Once
	signal := func() { once.Do(func() { close(opened) }) }
	defer signal()
	req, stream, err := c.newRequest(c.ctx, http.MethodGet, "text/event-stream", nil)
	if err != nil {
		return
	}
	resp, err := c.o.Client.Do(req)
	if err != nil {
		return
	}
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header) {
		resp.Body.Close()
		return
	}
	signal()
	meta := store.HTTPMeta{Method: http.MethodGet, Path: c.path, Status: resp.StatusCode, Stream: store.StreamGetSSE, StreamID: stream,
		ResponseHeader: c.o.Redactor.Header(resp.Header)}
	c.follow(resp.Body, meta, &watch{ctx: c.ctx, resumable: true})
}

// got taps a message from the server and hands it on.
func (c *StreamableClient) got(frame []byte, meta store.HTTPMeta, related string) {
	c.tap(frame, meta)
	c.o.Receive(frame, related)
}

// tap records a message from the server. The answer to initialize gives
// the protocol version later requests carry.
func (c *StreamableClient) tap(frame []byte, meta store.HTTPMeta) {
	c.o.Tap.Append(store.S2C, time.Now(), frame, &meta)
	if sum := jsonrpc.Classify(frame); sum.Kind == jsonrpc.Response {
		c.mu.Lock()
		if sum.ID == c.initID && c.version == "" {
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(frame, &r) == nil {
				c.version = r.Result.ProtocolVersion
			}
		}
		c.mu.Unlock()
	}
}

// Close ends the session with a DELETE, as a leaving client should, then
// the streams still open (calls never answered), and waits for their
// readers.
func (c *StreamableClient) Close() store.EndInfo {
	c.mu.Lock()
	sid, legacy := c.sid, c.legacy
	c.closing = true
	c.mu.Unlock()
	if legacy != nil {
		legacy.Close() // ends the GET stream, and with it the session
	}
	if sid != "" {
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		if req, _, err := c.newRequest(ctx, http.MethodDelete, "", nil); err == nil {
			if resp, err := c.o.Client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.cancel()
	c.wg.Wait()
	return store.EndInfo{Time: time.Now(), Reason: store.EndClosed}
}
