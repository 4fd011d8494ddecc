package fallback

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// httpConn is a Streamable HTTP client for one server session: a POST per
// message, answers as JSON or an event stream (whose messages belong to
// the POST's request), Mcp-Session-Id and MCP-Protocol-Version as a client
// sends them, the GET stream once initialized, and a DELETE at the end.
// Every message is tapped as the HTTP recorder would keep it, without the
// request headers (which may carry the credentials of Options.Header) and
// with the URL's secret query parameters hidden.
type httpConn struct {
	o       Options
	path    string // the URL's path and query as recorded, secrets hidden
	client  *http.Client
	tap     recorder.Tap
	receive func([]byte, string)
	// failed is told when a request will get no answer: its event stream
	// ended without one.
	failed func(id string, err error)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	sid     string
	version string
	stream  uint64
	getOnce sync.Once
	aborts  map[string]context.CancelFunc // our request id → what closes its POST
}

// httpClient is Options.HTTPClient, or one that keeps the bytes as the
// server sent them.
func httpClient(o Options) *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // record the bytes as the server sent them
	return &http.Client{Transport: tr}
}

func startHTTP(o Options, tap recorder.Tap, receive func([]byte, string), failed func(string, error)) *httpConn {
	client := httpClient(o)
	// Not the session's context: close still has a DELETE to send.
	ctx, cancel := context.WithCancel(context.Background())
	path := recorder.NewHTTPRedactor(o.Redact).PathQuery(o.URL)
	return &httpConn{o: o, path: path, client: client, tap: tap, receive: receive, failed: failed, ctx: ctx, cancel: cancel}
}

// newRequest makes a request with the headers every request of the
// session carries.
func (c *httpConn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, uint64, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.o.URL.String(), rd)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mcphttp.SetSession(req.Header, c.o.Header, c.sid, c.version)
	c.stream++
	return req, c.stream, nil
}

func (c *httpConn) negotiated(v string) {
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
}

// send POSTs one message and takes in what the server answers. It returns
// once the answer is read (JSON) or its event stream is open (read on).
func (c *httpConn) send(frame []byte) error { return c.request(frame, nil, nil) }

// request is send with the Mcp-Param-* headers a 2026-07-28 tools/call
// carries; written is called once the POST has been written, before its
// answer (which a long call may keep a while).
func (c *httpConn) request(frame []byte, params []mcphttp.ParamHeader, written func()) error {
	sum := jsonrpc.Classify(frame)
	ctx, done := c.ctx, func() {}
	if sum.Kind == jsonrpc.Request {
		ctx, done = c.abortable(sum.ID)
	}
	req, stream, err := c.newRequest(ctx, http.MethodPost, frame)
	if err != nil {
		done()
		return err
	}
	if written != nil {
		var once sync.Once
		wrote := func() { once.Do(written) }
		defer wrote() // also when it could not be written
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote() },
		}))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if mcphttp.SetStateless(req.Header, frame, sum.Method) {
		mcphttp.SetParams(req.Header, frame, params)
	}
	c.tap.Append(store.C2S, time.Now(), frame, &store.HTTPMeta{Method: http.MethodPost, Path: c.path, Stream: "post-body", StreamID: stream})
	resp, err := c.client.Do(req)
	if err != nil {
		done()
		return fmt.Errorf("cannot reach it: %w", err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		c.sid = sid
		c.mu.Unlock()
	}
	meta := store.HTTPMeta{Method: http.MethodPost, Path: c.path, Status: resp.StatusCode, StreamID: stream}
	related := ""
	if sum.Kind == jsonrpc.Request {
		related = sum.ID
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
		done()
		resp.Body.Close()
		if sum.Method == "notifications/initialized" {
			c.getOnce.Do(c.openGetStream)
		}
		return nil
	case ct == "text/event-stream" && resp.StatusCode == http.StatusOK:
		meta.Stream = "post-sse"
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer done()
			defer resp.Body.Close()
			c.readEvents(resp.Body, meta, related)
			if related != "" {
				c.failed(related, fmt.Errorf("its event stream for the request ended without an answer"))
			}
		}()
		return nil
	}
	defer done()
	body, err := io.ReadAll(io.LimitReader(resp.Body, sse.DefaultMaxEvent))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading its answer: %w", err)
	}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '{' && (resp.StatusCode < 300 || jsonrpc.Classify(t).ID == related) {
		meta.Stream = "json"
		c.got(t, meta, related)
		return nil
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("it answered HTTP %d: %.200s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// abortable is the context of the POST of our request id, which abort
// cancels, and what forgets it once its answer is in.
func (c *httpConn) abortable(id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.aborts == nil {
		c.aborts = map[string]context.CancelFunc{}
	}
	c.aborts[id] = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.aborts, id)
		c.mu.Unlock()
		cancel()
	}
}

// abort closes the POST of our request id, its response stream with it:
// in 2026-07-28, how a client cancels a request.
func (c *httpConn) abort(id string) bool {
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
// request (server-everything asks for roots there), and waits a moment
// for it to open: the next request may depend on what comes on it. A 405
// says the server has none.
func (c *httpConn) openGetStream() {
	opened := make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		var once sync.Once
		signal := func() { once.Do(func() { close(opened) }) }
		defer signal()
		req, stream, err := c.newRequest(c.ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := c.client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
			return
		}
		signal()
		c.readEvents(resp.Body, store.HTTPMeta{Method: http.MethodGet, Path: c.path, Status: resp.StatusCode, Stream: "get-sse", StreamID: stream}, "")
	}()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	}
}

// readEvents takes the messages of one event stream; events without data
// (2025-11-25 priming) are not messages.
func (c *httpConn) readEvents(body io.Reader, meta store.HTTPMeta, related string) {
	_ = sse.Messages(body, sse.DefaultMaxEvent, func(ev sse.Event) {
		m := meta
		m.EventID, m.EventType, m.Retry = ev.ID, ev.Type, ev.Retry
		c.got(ev.Data, m, related)
	})
}

func (c *httpConn) got(frame []byte, meta store.HTTPMeta, related string) {
	c.tap.Append(store.S2C, time.Now(), frame, &meta)
	c.receive(frame, related)
}

// close ends the HTTP session with a DELETE, as a leaving client should,
// then the streams still open.
func (c *httpConn) close() store.EndInfo {
	c.mu.Lock()
	sid := c.sid
	c.mu.Unlock()
	if sid != "" {
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		if req, _, err := c.newRequest(ctx, http.MethodDelete, nil); err == nil {
			if resp, err := c.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.cancel()
	c.wg.Wait()
	return store.EndInfo{Time: time.Now(), Reason: store.EndClosed}
}
