package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// Resuming a Streamable HTTP stream (2025-03-26 … 2025-11-25): when a
// POST's SSE answer ends before the answer, or the GET stream ends while
// the session goes on, the client GETs the endpoint with Last-Event-ID, the
// id of the last event it saw, and the server replays what followed on
// that stream. Only a server that gave event ids can be asked; 2026-07-28
// has no resumption at all.
//
// A clean end and a broken connection are treated alike: 2025-11-25 lets
// a server close the connection, without ending the stream, at any time
// after an event with an id, and expects the client to come back
// (polling). Either way the answer is still to come.
const (
	// maxResumes bounds the resumes in a row that bring no new event.
	maxResumes = 5
	// resumeBackoff is the wait before the first resume when the server
	// gave no retry:, doubled at each resume that brought nothing.
	resumeBackoff = 100 * time.Millisecond
	// No wait before a resume is longer than a quarter of
	// StreamableOptions.Timeout: a resume should leave the resumed stream
	// time to bring the answer a caller is waiting for.
	maxPauseShare = 4
)

// watch is what the client follows on one SSE stream.
type watch struct {
	// post: a POST's answer stream, which carries the answers to pending;
	// else the session's GET stream.
	post bool
	// ctx ends when the stream is no longer wanted: the POST was aborted,
	// or the session closed.
	ctx     context.Context
	related string            // the POST's request id, for Receive
	pending map[string]string // ids of the requests not yet answered, as written, by requestIDs' key
	// resumable: the stream is of the handshake era.
	resumable bool
	lastID    string        // the last event id the server gave, "" none
	retry     time.Duration // the server's last retry:, if hasRetry
	hasRetry  bool
}

// requestIDs are the ids of the requests a POST body carries (a
// 2025-03-26 batch may carry several), each as written, by the form an
// answer is found by (jsonrpc.CanonicalID: an answer may write its id
// another way, "1" for "\u0031", 1.0 for 1).
func requestIDs(frame []byte, sum jsonrpc.Summary) map[string]string {
	ids := map[string]string{}
	switch sum.Kind {
	case jsonrpc.Request:
		ids[jsonrpc.CanonicalIDString(sum.ID)] = sum.ID
	case jsonrpc.Batch:
		jsonrpc.Elements(frame, func(v []byte) {
			if s := jsonrpc.Classify(v); s.Kind == jsonrpc.Request {
				ids[jsonrpc.CanonicalIDString(s.ID)] = s.ID
			}
		})
	}
	return ids
}

// follow reads an SSE stream until it ends, and resumes it while it
// should: until the requests it carries are answered, or the GET stream
// for as long as the session lasts. It closes body.
func (c *StreamableClient) follow(body io.ReadCloser, meta store.HTTPMeta, w *watch) {
	err := c.readEvents(body, meta, w)
	body.Close()
	tries := 0 // resumes in a row that brought no new event
	for {
		if (w.post && len(w.pending) == 0) || c.stopping(w) {
			return
		}
		ended := "ended"
		if err != nil && !errors.Is(err, io.EOF) {
			ended = fmt.Sprintf("broke (%v)", err)
		}
		switch {
		case !w.post && w.lastID == "":
			return // a GET stream that cannot be resumed: nothing waits on it
		case !w.resumable:
			c.lost(w, fmt.Sprintf("%s before the answer, and 2026-07-28 streams cannot be resumed", ended))
			return
		case w.lastID == "":
			c.lost(w, fmt.Sprintf("%s before the answer, and the server gave no event id to resume it from", ended))
			return
		case tries == maxResumes:
			c.lost(w, fmt.Sprintf("%s; %d resumes from event %q brought nothing new (last: %v)", ended, maxResumes, w.lastID, err))
			return
		}
		tries++
		if !c.pause(w, tries) {
			return
		}
		from := w.lastID
		resp, rmeta, rerr := c.resume(w.ctx, from)
		switch {
		case errors.Is(rerr, errRefused):
			c.lost(w, fmt.Sprintf("%s; resuming from event %q: %v", ended, from, rerr))
			return
		case rerr != nil:
			err = rerr // a connection that failed: try again
			continue
		}
		err = c.readEvents(resp.Body, rmeta, w)
		resp.Body.Close()
		if w.lastID != from {
			tries = 0
		}
	}
}

func (c *StreamableClient) stopping(w *watch) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing || w.ctx.Err() != nil
}

// pause waits before resume number try: the server's retry: as 2025-11-25
// says a client must, or without one a backoff that doubles; either at
// most a quarter of StreamableOptions.Timeout. False: the stream is no
// longer wanted.
func (c *StreamableClient) pause(w *watch, try int) bool {
	d := resumeBackoff << (try - 1)
	if w.hasRetry {
		d = w.retry
	}
	d = min(d, c.o.Timeout/maxPauseShare)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// errRefused marks a resume the server answered without a stream: asking
// again will not help (a 409, 429 or 5xx gateway error may, and is not
// one).
var errRefused = errors.New("refused")

// resume GETs the stream that went on after event from, and says how to
// tap what it carries: as a recorder would, a GET stream whose request
// named the Last-Event-ID.
func (c *StreamableClient) resume(ctx context.Context, from string) (*http.Response, store.HTTPMeta, error) {
	req, stream, err := c.newRequest(ctx, http.MethodGet, "text/event-stream", nil)
	if err != nil {
		return nil, store.HTTPMeta{}, fmt.Errorf("%w: %v", errRefused, err)
	}
	req.Header.Set("Last-Event-ID", from)
	meta := store.HTTPMeta{Method: http.MethodGet, Path: c.path, Stream: store.StreamGetSSE, StreamID: stream,
		RequestHeader: http.Header{"Last-Event-Id": {from}}}
	resp, err := c.o.Client.Do(req)
	if err != nil {
		return nil, meta, err
	}
	meta.Status, meta.ResponseHeader = resp.StatusCode, c.o.Redactor.Header(resp.Header)
	if resp.StatusCode == http.StatusOK && isEventStream(resp.Header) {
		return resp, meta, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	why := (&Refusal{Status: resp.StatusCode, Body: body}).Error()
	switch resp.StatusCode {
	// 409: go-sdk's server answers so while it still holds the stream for
	// the connection that broke, until it notices that one is gone.
	case http.StatusConflict, http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return nil, meta, errors.New(why)
	}
	if resp.StatusCode == http.StatusOK {
		why = fmt.Sprintf("HTTP 200 with Content-Type %q, not an event stream", resp.Header.Get("Content-Type"))
	}
	return nil, meta, fmt.Errorf("%w: %s", errRefused, why)
}

// lost reports a stream the client could not follow to its end: each
// request still waiting on it fails, naming why; a GET stream is a note.
func (c *StreamableClient) lost(w *watch, why string) {
	if !w.post {
		if c.o.Note != nil {
			c.o.Note("the GET stream " + why)
		}
		return
	}
	if c.o.Failed == nil {
		return
	}
	for _, id := range w.pending {
		c.o.Failed(id, errors.New("its SSE answer stream "+why))
	}
}

// readEvents takes the events of one SSE stream until it ends, and
// returns what ended it (io.EOF at a clean end). It keeps the last event
// id and retry the server gave, and which of w's requests got answered.
// Priming events (no data) are not messages.
func (c *StreamableClient) readEvents(body io.Reader, meta store.HTTPMeta, w *watch) error {
	rd := sse.NewReader(body, sse.DefaultMaxEvent)
	rd.BeforeLongEvent(c.waitStore)
	for {
		ev, err := rd.Next()
		if err != nil {
			return err
		}
		var end error
		if !ev.Complete {
			// The stream ended inside this event. After a clean end the
			// server meant it whole (only the last blank line is
			// missing); after a break it may be cut short, and its id is
			// not one the client has seen whole, so it is dropped, as a
			// browser drops it.
			if _, end = rd.Next(); !errors.Is(end, io.EOF) {
				return end
			}
		}
		if ev.HasID && !strings.ContainsRune(ev.ID, 0) { // WHATWG: an id with NUL is ignored
			w.lastID = ev.ID
		}
		if n, err := strconv.ParseUint(ev.Retry, 10, 31); err == nil {
			w.retry, w.hasRetry = time.Duration(n)*time.Millisecond, true
		}
		if len(ev.Data) > 0 {
			m := meta
			m.EventID, m.EventType, m.Retry = ev.ID, ev.Type, ev.Retry
			c.got(ev.Data, m, w.related)
			if s := jsonrpc.Classify(ev.Data); s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error {
				delete(w.pending, jsonrpc.CanonicalIDString(s.ID))
			}
		}
		if end != nil {
			return end
		}
	}
}
