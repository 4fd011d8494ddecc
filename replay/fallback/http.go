package fallback

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// httpConn is a Streamable HTTP session with the server: the client
// mcpspy rerun uses too (recorder.StreamableClient), which taps every
// message as the HTTP recorder would keep it, response headers redacted
// as it redacts them, but without the request headers
// (which may carry the credentials of Options.Header) and with the URL's
// secret query parameters hidden.
type httpConn struct {
	c *recorder.StreamableClient
}

// httpClient is Options.HTTPClient, or one that keeps the bytes as the
// server sent them.
func httpClient(o Options) *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return recorder.UpstreamClient()
}

// startHTTP makes the client; nothing is sent before the first message.
// failed is told when a request will get no answer: its event stream
// ended without one, and could not be resumed. onLegacy is told when the
// server turned out to speak the 2024-11-05 transport, and lost when it
// then ends the session.
func startHTTP(o Options, tap recorder.Tap, receive func([]byte, string), failed func(string, error), onLegacy func(), lost func(error)) *httpConn {
	return &httpConn{c: recorder.NewStreamableClient(recorder.StreamableOptions{
		URL: o.URL, Header: o.Header, Client: httpClient(o), Tap: tap, Redactor: o.httpRedactor(),
		Receive: receive, Failed: failed,
		OnLegacy: func(done <-chan struct{}) {
			onLegacy()
			go tellWhenGone(done, lost, "it closed its event stream") // ends with the stream, at the latest when close ends it
		},
	})}
}

func (c *httpConn) send(frame []byte) error { return c.request(frame, nil, nil) }

func (c *httpConn) request(frame []byte, params []mcphttp.ParamHeader, written func()) error {
	var extra http.Header
	if len(params) > 0 {
		extra = http.Header{}
		mcphttp.SetParams(extra, frame, params)
	}
	err := c.c.Post(frame, extra, written)
	var refused *recorder.Refusal
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("it answered %w", err)
	case err != nil:
		return fmt.Errorf("cannot reach it: %w", err)
	}
	return nil
}

func (c *httpConn) abort(id string) bool { return c.c.Abort(id) }

func (c *httpConn) close() store.EndInfo { return c.c.Close() }
