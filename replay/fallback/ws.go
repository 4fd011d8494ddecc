package fallback

import (
	"context"
	"fmt"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// wsConn is a WebSocket session with the server (recorder.WSClient, as
// mcpspy rerun uses it): one text frame per message each way, tapped as
// the WebSocket recorder keeps them. WebSocket is no spec transport
// (SEP-1288 proposes one); this is the TypeScript SDK client's form,
// subprotocol "mcp".
type wsConn struct{ c *recorder.WSClient }

// startWS opens the connection. lost is told when the server closes it
// before the fallback does: the session is over.
func startWS(o Options, tap recorder.Tap, receive func([]byte, string), lost func(error)) (*wsConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.StartTimeout)
	defer cancel()
	c, err := recorder.DialWS(ctx, recorder.WSOptions{
		URL: o.URL, Header: o.Header, Timeout: o.StartTimeout, Tap: tap, Redactor: o.httpRedactor(),
		Receive: func(f []byte) { receive(f, "") },
	})
	if err != nil {
		return nil, err
	}
	go tellWhenGone(c.Done(), lost, "it closed the WebSocket connection") // at the latest when close ends it
	return &wsConn{c: c}, nil
}

func (w *wsConn) send(frame []byte) error {
	if err := w.c.Send(frame); err != nil {
		return fmt.Errorf("the WebSocket connection is closed: %w", err)
	}
	return nil
}

// request sends a request of ours: WebSocket has no headers for params.
func (w *wsConn) request(frame []byte, _ []mcphttp.ParamHeader, written func()) error {
	err := w.send(frame)
	if written != nil {
		written()
	}
	return err
}

func (w *wsConn) abort(string) bool { return false }

func (w *wsConn) close() store.EndInfo { return w.c.Close() }
