package replay

import (
	"context"
	"fmt"
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
	// served counts the connections being served, so that Close returns
	// once their sessions have ended and counted what they never sent.
	served sync.WaitGroup
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
	st.served.Add(1) // under mu, before closed: Close's Wait sees it
	return true
}

// hungUpByUs says whether a connection's end was mcpmock's doing: its
// Close, a "close" fault or a failed write (gone closed), rather than
// the client closing it.
func (s *Server) hungUpByUs(gone <-chan struct{}) bool {
	select {
	case <-gone:
		return true
	default:
	}
	s.ws.mu.Lock()
	defer s.ws.mu.Unlock()
	return s.ws.closed
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
	st.served.Wait()
}

func (s *Server) serveWebSocket(conn *websocket.Conn) {
	defer conn.Close()
	if !s.trackWS(conn, true) {
		return
	}
	defer s.ws.served.Done()
	defer s.trackWS(conn, false)

	// Frames wait in out for the writer. A connection cannot be resumed:
	// a frame that fails to be written, one still waiting when the
	// connection closes and one sent after is lost, and counted.
	out := make(chan []byte, 256)
	gone := make(chan struct{})
	var goneOnce sync.Once
	hangup := func() { goneOnce.Do(func() { close(gone); conn.Close() }) }
	var name string // the session's, for the warning
	lost := func(msgs [][]byte) {
		s.countUndelivered(name, "connection", "the connection closed before they were written", msgs)
	}
	send := func(msg []byte) error {
		select {
		case <-gone:
		case out <- msg: // after gone too, at random: the drain below counts it
			return nil
		}
		lost([][]byte{msg})
		return errQueueClosed
	}
	sess := s.newSession(context.Background(), send, hangup)
	name = fmt.Sprintf("%d (WebSocket from %s)", sess.num, conn.RemoteAddr())
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			select {
			case m := <-out:
				if conn.WriteMessage(websocket.TextMessage, m) != nil {
					lost([][]byte{m})
					hangup()
					return
				}
			case <-gone:
				return
			}
		}
	}()
	ex := connExchange{send}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			break
		}
		sess.handle(data, ex)
	}
	if !s.hungUpByUs(gone) {
		sess.clientLeft(wsGoneWhy)
	}
	sess.close() // nothing sends after this
	hangup()
	<-writerDone
	var left [][]byte
	for len(out) > 0 {
		left = append(left, <-out)
	}
	if len(left) > 0 {
		lost(left)
	}
	s.sayHeldLosses(name)
}
