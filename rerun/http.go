package rerun

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"sync"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// httpConn reruns over Streamable HTTP with recorder.StreamableClient
// (the client mcpmock's fallback uses too): a POST per frame, the GET
// stream once initialized, broken streams resumed with Last-Event-ID.
// What it adds is the client's knowledge of tools: a 2026-07-28
// tools/call carries the Mcp-Param-* headers of its tool's x-mcp-header
// inputs (params.go), learnt from the server's own tools/list answers.
type httpConn struct {
	c *recorder.StreamableClient
	// failed is told when a request got an HTTP answer that carries no
	// JSON-RPC message (a 404, a proxy's error page), or its stream ended
	// for good before the answer: it will not be answered, and the rerun
	// should not wait for it.
	failed func(id string, status int, reason string)
	// note is told what the rerun could not do as the recording did, for
	// Result.Notes.
	note func(string)

	mu sync.Mutex
	// live is what the server's own tools/list answers have said, listIDs
	// the ids of the tools/list requests sent and not yet answered.
	live    toolSchemas
	listIDs map[string]bool // by jsonrpc.CanonicalID
}

func startHTTP(o Options, t *tape, receive func([]byte), failed func(id string, status int, reason string), note func(string)) (conn, error) {
	client := o.HTTPClient
	if client == nil {
		client = recorder.UpstreamClient()
	}
	if recorder.IsLegacyURL(o.URL) {
		return startLegacy(o, t, client, receive, failed)
	}
	h := &httpConn{failed: failed, note: note, listIDs: map[string]bool{}}
	h.c = recorder.NewStreamableClient(recorder.StreamableOptions{
		URL: o.URL, Header: o.Header, Client: client, Tap: t, Timeout: o.Timeout, Redactor: o.redactor(),
		Receive: func(frame []byte, _ string) {
			h.heard(frame)
			receive(frame)
		},
		Failed:   func(id string, err error) { failed(id, 0, err.Error()) },
		Note:     note,
		OnLegacy: func(<-chan struct{}) { t.setTransport(store.TransportLegacySSE) },
	})
	return h, nil
}

func (c *httpConn) send(frame []byte, st *step) error {
	sum := jsonrpc.Classify(frame)
	var extra http.Header
	if sum.Kind == jsonrpc.Request {
		c.mu.Lock()
		if sum.Method == "tools/list" {
			c.listIDs[jsonrpc.CanonicalIDString(sum.ID)] = true
		}
		live := c.live
		c.mu.Unlock()
		// Only a 2026-07-28 call has Mcp-Param-* headers (the client
		// sets the others from the frame itself).
		if sum.Method == "tools/call" && mcphttp.SetStateless(http.Header{}, frame, sum.Method) {
			extra = http.Header{}
			if n := paramHeaders(extra, frame, sum.Tool, live, st); n != "" {
				c.note(n)
			}
		}
	}
	err := c.c.Post(frame, extra, nil)
	var refused *recorder.Refusal
	if errors.As(err, &refused) {
		if sum.Kind == jsonrpc.Request {
			c.failed(sum.ID, refused.Status, refusalReason(refused))
		}
		return nil
	}
	return err
}

// heard learns the tools a tools/list answer lists, for the calls after.
func (c *httpConn) heard(frame []byte) {
	sum := jsonrpc.Classify(frame)
	if sum.Kind != jsonrpc.Response && sum.Kind != jsonrpc.Error {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id := jsonrpc.CanonicalIDString(sum.ID); c.listIDs[id] {
		c.live = c.live.with(frame)
		delete(c.listIDs, id)
	}
}

func (c *httpConn) close() store.EndInfo { return c.c.Close() }

// refusalReason is a refusal on one line: its status and its body's start,
// each run of white space one space, and an HTML page's text without its
// tags (Express answers a path it does not serve with one), as stderr
// names it once for each request refused.
func refusalReason(r *recorder.Refusal) string {
	body := string(r.Body)
	if media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); media == "text/html" {
		body = htmlTag.ReplaceAllString(body, " ")
	}
	return fmt.Sprintf("HTTP %d: %.200s", r.Status, store.OneLine(body))
}

// htmlTag is an HTML tag, comment or doctype, for refusalReason to drop.
var htmlTag = regexp.MustCompile(`<[^>]*>`)
