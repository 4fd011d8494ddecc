package rerun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mcptape/mcptape/store"
)

// wsConn is a WebSocket client as the TS SDK's WebSocketClientTransport
// is: subprotocol "mcp", one JSON-RPC message per text frame.
type wsConn struct {
	c    *websocket.Conn
	tape *tape
	path string

	mu   sync.Mutex // gorilla allows one writer at a time
	done chan struct{}
	end  store.EndInfo // how the connection ended, set before done closes
}

func isWebSocket(u *url.URL) bool { return u.Scheme == "ws" || u.Scheme == "wss" }

func startWS(ctx context.Context, o Options, t *tape, receive func([]byte)) (conn, error) {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: o.Timeout, Proxy: http.ProxyFromEnvironment}
	c, resp, err := d.DialContext(ctx, o.URL.String(), o.Header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("WebSocket %s: %s", secrets.URL(o.URL), resp.Status)
		}
		return nil, fmt.Errorf("WebSocket %s: %w", secrets.URL(o.URL), err)
	}
	w := &wsConn{c: c, tape: t, path: secrets.PathQuery(o.URL), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			mt, data, err := c.ReadMessage()
			if err != nil {
				w.end = store.EndInfo{Reason: store.EndClosed}
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					w.end.CloseCode = ce.Code
				} else {
					w.end.Error = err.Error()
				}
				return
			}
			t.Append(store.S2C, time.Now(), data, &store.HTTPMeta{Method: http.MethodGet, Path: w.path, Status: http.StatusSwitchingProtocols, Stream: "ws", WSOpcode: mt})
			if mt == websocket.TextMessage {
				receive(data)
			}
		}
	}()
	return w, nil
}

func (w *wsConn) send(frame []byte, _ *step) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tape.Append(store.C2S, time.Now(), frame, &store.HTTPMeta{Method: http.MethodGet, Path: w.path, Status: http.StatusSwitchingProtocols, Stream: "ws", WSOpcode: websocket.TextMessage})
	return w.c.WriteMessage(websocket.TextMessage, frame)
}

// close says goodbye with a normal closure and waits (briefly) for the
// server's close in return.
func (w *wsConn) close() store.EndInfo {
	w.mu.Lock()
	_ = w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	w.mu.Unlock()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
	}
	w.c.Close()
	<-w.done
	w.end.Time = time.Now()
	return w.end
}
