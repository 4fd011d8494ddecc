package recorder

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

// IsWebSocketURL says whether u names a WebSocket server (ws://, wss://).
func IsWebSocketURL(u *url.URL) bool { return u.Scheme == "ws" || u.Scheme == "wss" }

// WSClient is the client end of one MCP session over WebSocket, for the
// parts of mcptape that talk to a real server themselves (mcpspy rerun,
// mcpmock's fallback), as the TypeScript SDK's WebSocketClientTransport
// is: subprotocol "mcp", one JSON-RPC message per text frame. Every frame
// is tapped as the WebSocket recorder keeps it.
//
// One goroutine reads. Send may be called from many goroutines: the
// frames go one at a time (gorilla allows one writer). Close once, last.
type WSClient struct {
	c    *websocket.Conn
	o    WSOptions
	path string // the URL's path and query as recorded

	mu   sync.Mutex    // one writer at a time
	done chan struct{} // closed when the connection has ended
	end  store.EndInfo // how it ended, set before done closes
}

// WSOptions configure DialWS.
type WSOptions struct {
	URL *url.URL
	// Header is sent with the opening handshake; it is not recorded.
	Header http.Header
	// Timeout bounds the opening handshake; 0 is 30 s.
	Timeout time.Duration
	Tap     Tap
	// Redactor hides secrets in the recorded path and in errors; nil
	// shows them as they are.
	Redactor *HTTPRedactor
	// Receive gets each text frame the server sends, after it is tapped.
	Receive func(frame []byte)
}

// DialWS opens the connection.
func DialWS(ctx context.Context, o WSOptions) (*WSClient, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: o.Timeout, Proxy: http.ProxyFromEnvironment}
	c, resp, err := d.DialContext(ctx, o.URL.String(), o.Header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("WebSocket %s: %s", o.Redactor.URL(o.URL), resp.Status)
		}
		return nil, fmt.Errorf("WebSocket %s: %w", o.Redactor.URL(o.URL), err)
	}
	w := &WSClient{c: c, o: o, path: recordedPath(o.Redactor, o.URL), done: make(chan struct{})}
	go w.read()
	return w, nil
}

func (w *WSClient) meta(opcode int) *store.HTTPMeta {
	return &store.HTTPMeta{Method: http.MethodGet, Path: w.path, Status: http.StatusSwitchingProtocols, Stream: store.StreamWS, WSOpcode: opcode}
}

func (w *WSClient) read() {
	defer close(w.done)
	for {
		mt, data, err := readWSMessage(w.c, w.waitStore)
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
		w.o.Tap.Append(store.S2C, time.Now(), data, w.meta(mt))
		if mt == websocket.TextMessage {
			w.o.Receive(data)
		}
	}
}

// waitStore runs before a long message is read further, as the
// WebSocket recorder waits for its store (waitTap).
func (w *WSClient) waitStore() { waitTap(w.o.Tap) }

// Send taps frame and writes it as one text frame.
func (w *WSClient) Send(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	waitToSend(w.o.Tap, frame)
	w.o.Tap.Append(store.C2S, time.Now(), frame, w.meta(websocket.TextMessage))
	return w.c.WriteMessage(websocket.TextMessage, frame)
}

// Done is closed when the connection has ended: the session is over.
func (w *WSClient) Done() <-chan struct{} { return w.done }

// Close says goodbye with a normal closure, waits (at most 5 s) for the
// server's close in return, and says how the connection ended.
func (w *WSClient) Close() store.EndInfo {
	w.mu.Lock()
	_ = w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	w.mu.Unlock()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
	w.c.Close()
	<-w.done
	w.end.Time = time.Now()
	return w.end
}
