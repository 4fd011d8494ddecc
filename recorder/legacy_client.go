package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// IsLegacyURL says whether u names a 2024-11-05 HTTP+SSE endpoint rather
// than a Streamable HTTP one: by convention its path ends in /sse
// (server-everything's, the TypeScript SDK's examples'). Such a URL is
// opened as legacy at once; any other is tried as Streamable HTTP first
// (StreamableClient tells a legacy server by its answers).
func IsLegacyURL(u *url.URL) bool { return strings.HasSuffix(u.Path, "/sse") }

// LegacyClient is the client end of one 2024-11-05 HTTP+SSE session, for
// the parts of mcptape that talk to a real server themselves (mcpspy
// rerun, mcpmock's fallback): one GET stream, on which the server first
// names the endpoint to POST to and then sends every message, and a POST
// of each frame to that endpoint. Every message is tapped as the HTTP
// recorder keeps it, with the response headers after redaction but
// without the request headers (which may carry credentials the recorder's
// names would not tell).
//
// Post may be called from many goroutines: the POSTs go one at a time, in
// the order called. Close once, last.
type LegacyClient struct {
	o        LegacyOptions
	path     string   // the GET's path and query as recorded
	endpoint *url.URL // set before the client is returned
	ctx      context.Context
	cancel   context.CancelFunc
	stream   sync.WaitGroup
	done     chan struct{} // closed when the GET stream has ended
	mu       sync.Mutex    // one POST at a time: the order is the caller's
}

// LegacyOptions configure DialLegacy.
type LegacyOptions struct {
	URL *url.URL
	// Header is added to every request; it is not recorded.
	Header http.Header
	Client *http.Client
	// Timeout bounds the wait for the endpoint event; 0 is 30 s.
	Timeout time.Duration
	Tap     Tap
	// Redactor hides secrets in the recorded paths; nil records them as
	// they are.
	Redactor *HTTPRedactor
	// Receive gets each message the server sends, after it is tapped.
	Receive func(frame []byte)
}

// DialLegacy opens the GET stream and waits for the endpoint event.
func DialLegacy(o LegacyOptions) (*LegacyClient, error) {
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.URL.String(), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, vs := range o.Header {
		req.Header[k] = vs
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s: %s", o.URL.Redacted(), resp.Status)
	}
	c := &LegacyClient{o: o, path: recordedPath(o.Redactor, o.URL), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	ready := make(chan *url.URL, 1)
	c.stream.Add(1)
	go func() {
		defer c.stream.Done()
		defer close(c.done)
		defer resp.Body.Close()
		c.read(resp.Body, c.o.Redactor.Header(resp.Header), ready)
	}()
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	t := time.NewTimer(o.Timeout)
	defer t.Stop()
	select {
	case c.endpoint = <-ready:
		return c, nil
	case <-c.done:
		c.Close()
		return nil, fmt.Errorf("GET %s: the stream ended before an endpoint event", o.URL.Redacted())
	case <-t.C:
		c.Close()
		return nil, fmt.Errorf("GET %s: no endpoint event within %s", o.URL.Redacted(), o.Timeout)
	}
}

func recordedPath(r *HTTPRedactor, u *url.URL) string {
	if r == nil {
		return u.RequestURI()
	}
	return r.PathQuery(u)
}

// read takes the stream: the endpoint event, then messages.
func (c *LegacyClient) read(body io.Reader, header http.Header, ready chan<- *url.URL) {
	rd := sse.NewReader(body, sse.DefaultMaxEvent)
	rd.BeforeLongEvent(c.waitStore)
	named := false
	for {
		ev, err := rd.Next()
		if err != nil {
			return
		}
		if ev.Type == "endpoint" && !named {
			if u, err := c.o.URL.Parse(strings.TrimSpace(string(ev.Data))); err == nil {
				named = true
				ready <- u
			}
			continue
		}
		if len(ev.Data) == 0 {
			continue
		}
		frame := ev.Data // the event's own: the reader makes each anew
		c.o.Tap.Append(store.S2C, time.Now(), frame, &store.HTTPMeta{Method: http.MethodGet, Path: c.path, Status: http.StatusOK,
			Stream: store.StreamLegacySSE, EventID: ev.ID, EventType: ev.Type, ResponseHeader: header})
		c.o.Receive(frame)
	}
}

// waitStore runs before a long event is read further, as the HTTP
// recorder waits for its store (waitTap).
func (c *LegacyClient) waitStore() { waitTap(c.o.Tap) }

// Post taps frame and POSTs it to the endpoint. A refusal is a
// *Refusal.
func (c *LegacyClient) Post(frame []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(frame))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range c.o.Header {
		req.Header[k] = vs
	}
	waitToSend(c.o.Tap, frame)
	at := time.Now()
	sentMeta := store.HTTPMeta{Method: http.MethodPost, Path: recordedPath(c.o.Redactor, c.endpoint), Stream: store.StreamPostBody}
	m := sentMeta // the Tap owns what it is given
	seq := c.o.Tap.Append(store.C2S, at, frame, &m)
	resp, err := c.o.Client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	// Every POST's answer is bare (answers come on the stream): its status
	// goes on the message posted.
	if resp.StatusCode >= 300 {
		header := c.o.Redactor.Header(resp.Header)
		tapAnswered(c.o.Tap, seq, sentMeta, resp.StatusCode, header, refusalNote(body))
		tapRefusalBody(c.o.Tap, body, store.HTTPMeta{Method: http.MethodPost, Path: sentMeta.Path, Status: resp.StatusCode,
			ResponseHeader: header, Stream: store.StreamJSON})
		// No SessionGone: a 2024-11-05 session is its event stream,
		// whose end says it is over.
		return &Refusal{Status: resp.StatusCode, Body: body, Header: resp.Header}
	}
	tapAnswered(c.o.Tap, seq, sentMeta, resp.StatusCode, c.o.Redactor.Header(resp.Header), "")
	return nil
}

// Done is closed when the GET stream has ended: the session is over.
func (c *LegacyClient) Done() <-chan struct{} { return c.done }

// Close ends the GET stream, and with it the session, and waits for the
// reader.
func (c *LegacyClient) Close() {
	c.cancel()
	c.stream.Wait()
}
