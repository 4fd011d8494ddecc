package rerun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// httpConn is a minimal Streamable HTTP client: one POST per frame, the
// answer read as JSON or as an SSE stream (on its own goroutine, so a
// long call does not hold up the frames after it), Mcp-Session-Id and
// MCP-Protocol-Version carried as a client must, and once the session is
// initialized the GET stream on which the server sends what belongs to no
// request (server-everything asks for roots there). A stream that ends
// before its answer is resumed with Last-Event-ID (resume.go); a
// 2026-07-28 tools/call carries the Mcp-Param-* headers of its tool's
// x-mcp-header inputs (params.go).
type httpConn struct {
	o       Options
	client  *http.Client
	tape    *tape
	receive func([]byte)
	// failed is told when a request got an HTTP answer that carries no
	// JSON-RPC message (a 404, a proxy's error page): it will not be
	// answered, and the rerun should not wait for it.
	failed func(id, reason string)
	// note is told what the rerun could not do as the recording did, for
	// Result.Notes.
	note func(string)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	sid      string // Mcp-Session-Id, once the server gave one
	version  string // the negotiated protocol version, for the header
	initID   string // the initialize request's id
	streamID uint64
	getOnce  sync.Once
	// live is what the server's own tools/list answers have said, listIDs
	// the ids of the tools/list requests sent and not yet answered.
	live    toolSchemas
	listIDs map[string]bool
	// closing is set once the rerun ends the session: a stream that ends
	// from then on is not resumed.
	closing bool
}

func startHTTP(o Options, t *tape, receive func([]byte), failed func(id, reason string), note func(string)) (conn, error) {
	client := o.HTTPClient
	if client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableCompression = true // keep the bytes as the server sent them
		client = &http.Client{Transport: tr}
	}
	if recorder.IsLegacyURL(o.URL) {
		return startLegacy(o, t, client, receive, failed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &httpConn{o: o, client: client, tape: t, receive: receive, failed: failed, note: note, ctx: ctx, cancel: cancel, listIDs: map[string]bool{}}, nil
}

// request makes a request to the endpoint with the headers every request
// of the session carries: the user's, and once known the session id and
// the protocol version.
func (c *httpConn) request(ctx context.Context, method, accept string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.o.URL.String(), body)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mcphttp.SetSession(req.Header, c.o.Header, c.sid, c.version)
	return req, nil
}

func (c *httpConn) send(frame []byte, st *step) error {
	sum := jsonrpc.Classify(frame)
	req, err := c.request(c.ctx, http.MethodPost, "application/json, text/event-stream", bytes.NewReader(frame))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	stateless := mcphttp.SetStateless(req.Header, frame, sum.Method)
	c.mu.Lock()
	if sum.Method == "initialize" && sum.Kind == jsonrpc.Request {
		c.initID = sum.ID
	}
	if sum.Method == "tools/list" && sum.Kind == jsonrpc.Request {
		c.listIDs[sum.ID] = true
	}
	live := c.live
	c.streamID++
	stream := c.streamID
	c.mu.Unlock()
	if stateless && sum.Method == "tools/call" && sum.Kind == jsonrpc.Request {
		if n := paramHeaders(req.Header, frame, sum.Tool, live, st); n != "" {
			c.note(n)
		}
	}

	path := c.o.URL.RequestURI()
	c.tape.Append(store.C2S, time.Now(), frame, &store.HTTPMeta{Method: http.MethodPost, Path: path, Stream: "post-body", StreamID: stream})
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		if c.sid == "" {
			c.sid = sid
		}
		c.mu.Unlock()
	}
	meta := store.HTTPMeta{Method: http.MethodPost, Path: path, Status: resp.StatusCode, StreamID: stream}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
		resp.Body.Close()
		if sum.Method == "notifications/initialized" {
			// As the SDK clients do, once initialized. The stream must be
			// open before the next frame: a server sends there what the
			// next call may wait on (server-everything's roots/list before
			// get-roots-list). Read on its own goroutine; wait for its
			// headers, at most Timeout, as a server may hold them back.
			c.getOnce.Do(func() {
				opened := make(chan struct{})
				c.wg.Add(1)
				go func() {
					defer c.wg.Done()
					c.listen(opened)
				}()
				select {
				case <-opened:
				case <-time.After(c.o.Timeout):
				}
			})
		}
	case ct == "text/event-stream":
		meta.Stream = "post-sse"
		w := &watch{post: true, pending: requestIDs(frame, sum),
			// 2026-07-28 has no resumption; the handshake era's version
			// header is absent (2025-03-26) or an earlier date.
			resumable: req.Header.Get("MCP-Protocol-Version") < "2026-07-28"}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.follow(resp.Body, meta, w)
		}()
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, sse.DefaultMaxEvent))
		resp.Body.Close()
		if err != nil {
			return err
		}
		meta.Stream = "json"
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
			c.got(body, meta)
		} else if resp.StatusCode >= 300 && sum.Kind == jsonrpc.Request {
			c.failed(sum.ID, refusal(resp.StatusCode, body))
		}
	}
	return nil
}

// listen reads the session's GET stream, if the server has one (a 405
// says it has not, and is no error), until it ends or the rerun does. It
// closes opened once the server has answered the GET, or failed to.
func (c *httpConn) listen(opened chan<- struct{}) {
	var once sync.Once
	defer once.Do(func() { close(opened) })
	req, err := c.request(c.ctx, http.MethodGet, "text/event-stream", nil)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.streamID++
	meta := store.HTTPMeta{Method: http.MethodGet, Path: c.o.URL.RequestURI(), Stream: "get-sse", StreamID: c.streamID}
	c.mu.Unlock()
	resp, err := c.client.Do(req)
	if err != nil {
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		resp.Body.Close()
		return
	}
	meta.Status = resp.StatusCode
	once.Do(func() { close(opened) })
	c.follow(resp.Body, meta, &watch{resumable: true})
}

// refusal says how the server turned a request down outside JSON-RPC: the
// status and the start of the body.
func refusal(status int, body []byte) string {
	return fmt.Sprintf("HTTP %d: %.200s", status, strings.TrimSpace(string(body)))
}

// got records a message from the server and hands it on.
func (c *httpConn) got(frame []byte, meta store.HTTPMeta) {
	c.tape.Append(store.S2C, time.Now(), frame, &meta)
	sum := jsonrpc.Classify(frame)
	c.mu.Lock()
	if (sum.Kind == jsonrpc.Response || sum.Kind == jsonrpc.Error) && c.listIDs[sum.ID] {
		c.live = c.live.with(frame)
		delete(c.listIDs, sum.ID)
	}
	if sum.Kind == jsonrpc.Response && sum.ID == c.initID && c.version == "" {
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
	c.receive(frame)
}

func (c *httpConn) close() store.EndInfo {
	c.mu.Lock()
	sid := c.sid
	c.closing = true
	c.mu.Unlock()
	end := store.EndInfo{Reason: store.EndClosed}
	if sid != "" { // end the session, as a client leaving should
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		if req, err := c.request(ctx, http.MethodDelete, "", nil); err == nil {
			if resp, err := c.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.cancel() // streams still open (calls never answered) end here
	c.wg.Wait()
	end.Time = time.Now()
	return end
}
