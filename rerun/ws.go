package rerun

import (
	"context"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// wsConn reruns over WebSocket with recorder.WSClient (the client
// mcpmock's fallback uses too): subprotocol "mcp", one JSON-RPC message
// per text frame, a normal closure at the end.
type wsConn struct{ c *recorder.WSClient }

func startWS(ctx context.Context, o Options, t *tape, receive func([]byte)) (conn, error) {
	c, err := recorder.DialWS(ctx, recorder.WSOptions{URL: o.URL, Header: o.Header, Timeout: o.Timeout, Tap: t, Redactor: o.redactor(), Receive: receive})
	if err != nil {
		return nil, err
	}
	return &wsConn{c: c}, nil
}

func (w *wsConn) send(frame []byte, _ *step) error { return w.c.Send(frame) }

func (w *wsConn) close() store.EndInfo { return w.c.Close() }
