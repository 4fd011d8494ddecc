package gosdk

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WebSocketHandler serves srv over WebSocket (subprotocol "mcp"), one
// JSON-RPC message per text frame, as the TS SDK's WebSocketClientTransport
// expects: go-sdk has no WebSocket transport of its own. Each connection
// is a session of srv. When a connection ends, the close code the client
// sent (0 for none) goes to codes, if not nil.
func WebSocketHandler(srv *mcp.Server, codes chan<- int) http.Handler {
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		code := 0
		c.SetCloseHandler(func(cc int, _ string) error {
			code = cc
			msg := []byte{}
			if cc != websocket.CloseNoStatusReceived {
				msg = websocket.FormatCloseMessage(cc, "")
			}
			return c.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		})
		ss, err := srv.Connect(r.Context(), &wsConn{c: c}, nil)
		if err != nil {
			return
		}
		_ = ss.Wait()
		if codes != nil {
			codes <- code
		}
	})
}

// wsConn is one WebSocket as a go-sdk transport and connection.
type wsConn struct {
	c   *websocket.Conn
	wmu sync.Mutex // gorilla allows one writer at a time
}

func (c *wsConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

func (c *wsConn) Read(context.Context) (sdkrpc.Message, error) {
	_, data, err := c.c.ReadMessage()
	if err != nil {
		return nil, err
	}
	return sdkrpc.DecodeMessage(data)
}

func (c *wsConn) Write(_ context.Context, m sdkrpc.Message) error {
	data, err := sdkrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.c.WriteMessage(websocket.TextMessage, data)
}

func (c *wsConn) Close() error      { return c.c.Close() }
func (c *wsConn) SessionID() string { return "" }
