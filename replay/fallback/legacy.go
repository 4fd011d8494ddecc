package fallback

import (
	"errors"
	"time"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// legacyConn is a 2024-11-05 HTTP+SSE session with the server
// (recorder.LegacyClient, as mcpspy rerun uses it): every frame is POSTed
// to the endpoint the server named on its event stream, and every message
// comes back on that stream. A POST the server refuses fails the request
// it carried at once.
type legacyConn struct {
	c *recorder.LegacyClient
}

// startLegacy opens the event stream and waits for the endpoint. lost is
// told when the stream ends before the fallback closes it: the server
// ended the session.
func startLegacy(o Options, tap recorder.Tap, receive func([]byte, string), lost func(error)) (*legacyConn, error) {
	c, err := recorder.DialLegacy(recorder.LegacyOptions{
		URL: o.URL, Header: o.Header, Client: httpClient(o), Timeout: o.StartTimeout, Tap: tap,
		Redactor: o.httpRedactor(), Receive: func(f []byte) { receive(f, "") },
	})
	if err != nil {
		return nil, err
	}
	go tellWhenGone(c.Done(), lost, "it closed its event stream") // ends with the stream, at the latest when close ends it
	return &legacyConn{c: c}, nil
}

// tellWhenGone tells lost once done closes: the server's event stream or
// connection, and with it the session, has ended. After close it tells
// nobody who is still listening.
func tellWhenGone(done <-chan struct{}, lost func(error), what string) {
	<-done
	lost(errors.New(what))
}

func (c *legacyConn) send(frame []byte) error { return c.c.Post(frame) }

// request sends a request of ours: the 2024-11-05 transport has no
// headers for params. The POST is answered 202 as soon as the server has
// the message.
func (c *legacyConn) request(frame []byte, _ []mcphttp.ParamHeader, written func()) error {
	err := c.c.Post(frame)
	if written != nil {
		written()
	}
	return err
}

func (c *legacyConn) abort(string) bool { return false }

func (c *legacyConn) close() store.EndInfo {
	c.c.Close()
	return store.EndInfo{Time: time.Now(), Reason: store.EndClosed}
}
