package rerun

import (
	"errors"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// legacyConn is a 2024-11-05 HTTP+SSE session (recorder.LegacyClient):
// each frame is POSTed to the endpoint the server named, in the
// recording's order; a request the server refuses fails at once.
type legacyConn struct {
	c      *recorder.LegacyClient
	failed func(id string, status int, reason string)
}

func startLegacy(o Options, t *tape, client *http.Client, receive func([]byte), failed func(id string, status int, reason string)) (conn, error) {
	c, err := recorder.DialLegacy(recorder.LegacyOptions{URL: o.URL, Header: o.Header, Client: client, Timeout: o.Timeout, Tap: t, Redactor: o.redactor(), Receive: receive})
	if err != nil {
		return nil, err
	}
	return &legacyConn{c: c, failed: failed}, nil
}

func (c *legacyConn) send(frame []byte, _ *step) error {
	err := c.c.Post(frame)
	var refused *recorder.Refusal
	if errors.As(err, &refused) {
		if sum := jsonrpc.Classify(frame); sum.Kind == jsonrpc.Request {
			c.failed(sum.ID, refused.Status, refusalReason(refused))
		}
		return nil
	}
	return err
}

func (c *legacyConn) close() store.EndInfo {
	c.c.Close() // ends the GET stream, and with it the session
	return store.EndInfo{Time: time.Now(), Reason: store.EndClosed}
}
