package replay

import (
	"context"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
)

// WebSocket is not a spec transport; this follows the TypeScript SDK's
// client: subprotocol "mcp", one JSON-RPC message per text frame. Each
// connection is one session, with exactly one reader (the handler) and one
// writer goroutine.

type wsState struct {
	mu     sync.Mutex
	conns  map[*websocket.Conn]struct{}
	closed bool
}

// WebSocketHandler serves one session per WebSocket connection, on any
// path. Origin is checked as for Handler.
func (s *Server) WebSocketHandler() http.Handler {
	up := websocket.Upgrader{
		Subprotocols: []string{"mcp"},
		CheckOrigin: func(r *http.Request) bool {
			o := r.Header.Get("Origin")
			return o == "" || s.originAllowed(o)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader has answered
		}
		s.serveWebSocket(conn)
	})
}

func (s *Server) trackWS(c *websocket.Conn, add bool) bool {
	st := &s.ws
	st.mu.Lock()
	defer st.mu.Unlock()
	if !add {
		delete(st.conns, c)
		return true
	}
	if st.closed {
		return false
	}
	if st.conns == nil {
		st.conns = map[*websocket.Conn]struct{}{}
	}
	st.conns[c] = struct{}{}
	return true
}

func (s *Server) closeWebSockets() {
	st := &s.ws
	st.mu.Lock()
	st.closed = true
	conns := st.conns
	st.conns = nil
	st.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

func (s *Server) serveWebSocket(conn *websocket.Conn) {
	defer conn.Close()
	if !s.trackWS(conn, true) {
		return
	}
	defer s.trackWS(conn, false)

	out := make(chan []byte, 256)
	gone := make(chan struct{})
	var goneOnce sync.Once
	hangup := func() { goneOnce.Do(func() { close(gone); conn.Close() }) }
	send := func(msg []byte) error {
		select {
		case out <- msg:
			return nil
		case <-gone:
			return errQueueClosed
		}
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			select {
			case m := <-out:
				if conn.WriteMessage(websocket.TextMessage, m) != nil {
					hangup()
					return
				}
			case <-gone:
				return
			}
		}
	}()
	sess := s.newSession(context.Background(), send, hangup)
	ex := connExchange{send}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			break
		}
		sess.handle(data, ex)
	}
	sess.close()
	hangup()
	<-writerDone
}
