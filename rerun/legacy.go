package rerun

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

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// legacyConn is a 2024-11-05 HTTP+SSE client: one GET stream on which the
// server first names the endpoint to POST to, then sends every message;
// each frame is POSTed to that endpoint (202, no body).
type legacyConn struct {
	o       Options
	client  *http.Client
	tape    *tape
	receive func([]byte)
	failed  func(id, reason string)

	ctx      context.Context
	cancel   context.CancelFunc
	stream   sync.WaitGroup
	endpoint *url.URL // set before ready closes
	ready    chan struct{}
	mu       sync.Mutex // serialises POSTs: the order is the recording's
}

// isLegacy says whether u names a legacy SSE endpoint: by convention its
// path ends in /sse (server-everything's, the TS SDK's examples').
func isLegacy(u *url.URL) bool { return strings.HasSuffix(u.Path, "/sse") }

func startLegacy(o Options, t *tape, client *http.Client, receive func([]byte), failed func(id, reason string)) (conn, error) {
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
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s: %s", o.URL.Redacted(), resp.Status)
	}
	c := &legacyConn{o: o, client: client, tape: t, receive: receive, failed: failed, ctx: ctx, cancel: cancel, ready: make(chan struct{})}
	c.stream.Add(1)
	go func() {
		defer c.stream.Done()
		defer resp.Body.Close()
		c.read(resp.Body)
	}()
	select {
	case <-c.ready:
		return c, nil
	case <-time.After(o.Timeout):
		c.close()
		return nil, fmt.Errorf("GET %s: no endpoint event within %s", o.URL.Redacted(), o.Timeout)
	}
}

// read takes the stream: the endpoint event, then messages.
func (c *legacyConn) read(body io.Reader) {
	rd := sse.NewReader(body, sse.DefaultMaxEvent)
	path := c.o.URL.RequestURI()
	for {
		ev, err := rd.Next()
		if err != nil {
			return
		}
		if ev.Type == "endpoint" && c.endpoint == nil {
			if u, err := c.o.URL.Parse(strings.TrimSpace(string(ev.Data))); err == nil {
				c.endpoint = u
				close(c.ready)
			}
			continue
		}
		if len(ev.Data) == 0 {
			continue
		}
		frame := bytes.Clone(ev.Data)
		c.tape.Append(store.S2C, time.Now(), frame, &store.HTTPMeta{Method: http.MethodGet, Path: path, Status: http.StatusOK,
			Stream: "legacy-sse", EventID: ev.ID, EventType: ev.Type})
		c.receive(frame)
	}
}

func (c *legacyConn) send(frame []byte, _ *step) error {
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
	c.tape.Append(store.C2S, time.Now(), frame, &store.HTTPMeta{Method: http.MethodPost, Path: c.endpoint.RequestURI(), Stream: "post-body"})
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		if sum := jsonrpc.Classify(frame); sum.Kind == jsonrpc.Request {
			c.failed(sum.ID, refusal(resp.StatusCode, body))
		}
	}
	return nil
}

func (c *legacyConn) close() store.EndInfo {
	c.cancel() // ends the GET stream, and with it the session
	c.stream.Wait()
	return store.EndInfo{Time: time.Now(), Reason: store.EndClosed}
}
