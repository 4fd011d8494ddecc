package replay_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// Over legacy SSE and WebSocket one stream carries everything a session
// sends, and neither can be resumed: what is still waiting to be written
// when the client goes is lost. To make the loss certain, the client
// stops reading while the server writes an answer larger than the
// connection's buffers (so the writer blocks, and the list_changed that
// follows the answer waits behind it), then closes the connection.

// bigAnswer is larger than what loopback socket buffers hold (a few MiB).
var bigAnswer = strings.Repeat("x", 16<<20)

func bigAnswerTape() []string {
	return []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"2"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + bigAnswer + `"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	}
}

// stall stops the reads of the first connection its dial makes, and
// closes it: the client goes away.
type stall struct {
	stopped chan struct{}
	once    sync.Once
	conn    chan *stallConn // the first connection, once dialed
	dialed  atomic.Bool
}

func newStall() *stall {
	return &stall{stopped: make(chan struct{}), conn: make(chan *stallConn, 1)}
}

func (st *stall) stop() { st.once.Do(func() { close(st.stopped) }) }

// leave closes the stalled connection, as a client that goes away does.
func (st *stall) leave() {
	c := <-st.conn
	c.Close()
}

func (st *stall) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil || st.dialed.Swap(true) {
		return c, err
	}
	sc := &stallConn{Conn: c, stopped: st.stopped, closed: make(chan struct{})}
	st.conn <- sc
	return sc, nil
}

// stallConn reads nothing more once stopped, until it is closed.
type stallConn struct {
	net.Conn
	stopped <-chan struct{}
	closed  chan struct{}
	once    sync.Once
}

func (c *stallConn) Read(p []byte) (int, error) {
	select {
	case <-c.stopped:
		<-c.closed
		return 0, net.ErrClosed
	default:
		return c.Conn.Read(p)
	}
}

func (c *stallConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// wsLines shows a WebSocket as newline-delimited JSON, a line a text
// frame, so that go-sdk's IOTransport is a client over it: go-sdk has no
// WebSocket transport, and this is how the TS SDK's speaks (subprotocol
// mcp, one message a frame). IOTransport writes each message, newline
// included, in one Write, and reads from one goroutine.
type wsLines struct {
	c      *websocket.Conn
	rest   []byte // what is left of the frame being read
	closer sync.Once
}

func (w *wsLines) Read(p []byte) (int, error) {
	if len(w.rest) == 0 {
		_, data, err := w.c.ReadMessage()
		if err != nil {
			return 0, err
		}
		w.rest = append(data, '\n')
	}
	n := copy(p, w.rest)
	w.rest = w.rest[n:]
	return n, nil
}

func (w *wsLines) Write(p []byte) (int, error) {
	if err := w.c.WriteMessage(websocket.TextMessage, bytes.TrimSuffix(p, []byte("\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the connection once: IOTransport closes its reader and
// its writer, both w.
func (w *wsLines) Close() error {
	var err error
	w.closer.Do(func() { err = w.c.Close() })
	return err
}

// roundTripFunc makes a function an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestUndelivered_ClientLeavesMidStream(t *testing.T) {
	t.Parallel()
	const (
		readsAll     = "client reads all"
		leaves       = "client stops reading and leaves"
		serverCloses = "server closes while the client stalls"
	)
	sse := []string{"session mcpmock-1: ", "for its SSE stream never reached the client ("}
	ws := []string{"session 1 (WebSocket from 127.0.0.1:", "for its connection never reached the client ("}
	tests := []struct {
		transport, ends string
		// named are what the warning says of the session and the stream
		named []string
	}{
		{"legacy SSE", readsAll, nil},
		{"legacy SSE", leaves, sse},
		{"WebSocket", readsAll, nil},
		{"WebSocket", leaves, ws},
		// Close returns once the WebSocket sessions it ends have
		// counted: mcpmock writes its report right after.
		{"WebSocket", serverCloses, ws},
	}
	for _, tt := range tests {
		t.Run(tt.transport+", "+tt.ends, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, bigAnswerTape()...)})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			st := newStall()
			var mt mcp.Transport
			var cs *mcp.ClientSession
			// queued waits until the server holds the call's answer and
			// what follows it, waiting to be written.
			var queued func()
			switch tt.transport {
			case "legacy SSE":
				// A POST is answered (202) once the server has queued
				// what answering it sent.
				posted := make(chan struct{}, 16)
				ht := &http.Transport{DialContext: st.dial} // the first connection is the GET stream
				t.Cleanup(ht.CloseIdleConnections)
				hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := ht.RoundTrip(r)
					select {
					case <-st.stopped:
						posted <- struct{}{}
					default: // the handshake's
					}
					return resp, err
				})}
				mt = &mcp.SSEClientTransport{Endpoint: strings.TrimSuffix(s.URL(), "/mcp") + "/sse", HTTPClient: hc, MaxEventSize: -1}
				queued = func() { waitFor(t, posted, "the tools/call POST's answer") }
			case "WebSocket":
				d := &websocket.Dialer{NetDialContext: st.dial, Subprotocols: []string{"mcp"}}
				c, _, err := d.DialContext(ctx, s.WebSocketURL(), nil)
				if err != nil {
					t.Fatal(err)
				}
				wl := &wsLines{c: c}
				mt = &mcp.IOTransport{Reader: wl, Writer: wl, MaxLineLength: -1}
				// A WebSocket session answers a frame (when the answer
				// needs no waiting) before it reads the next: once a
				// notification sent after the call has arrived, the
				// call's answer is queued.
				queued = func() {
					waitReceived(t, s, "tools/call")
					if err := cs.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "after", Progress: 1}); err != nil {
						t.Fatal(err)
					}
					waitReceived(t, s, "notifications/progress")
				}
			}
			changed := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			cs, err := client.Connect(ctx, mt, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			stalls := tt.ends != readsAll
			if stalls {
				st.stop()
			}
			called := make(chan error, 1)
			go func() { _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"}); called <- err }()
			var want []replay.Undelivered
			if stalls {
				queued()
				want = []replay.Undelivered{{Method: "(response)", Count: 1}, {Method: "notifications/tools/list_changed", Count: 1}}
			} else {
				if err := waitFor(t, called, "the big answer"); err != nil {
					t.Fatal(err)
				}
				waitFor(t, changed, "list_changed")
			}
			var got []replay.Undelivered
			if tt.ends == serverCloses {
				s.Close()
				got = s.Report().Undelivered
			}
			if stalls {
				st.leave()
			}
			if err := cs.Close(); err != nil && !stalls {
				t.Fatal(err)
			}
			if stalls {
				if err := waitFor(t, called, "the call to end"); err == nil {
					t.Error("the call got its answer from a stream the client did not read")
				}
			}
			if got == nil {
				got = pollUndelivered(s, len(want))
			}
			s.Close()
			if d := s.Report().Undelivered; !reflect.DeepEqual(d, got) {
				t.Errorf("counted more once the server closed: %+v, then %+v", got, d)
			}
			slices.SortFunc(got, func(a, b replay.Undelivered) int { return strings.Compare(a.Method, b.Method) })
			if !reflect.DeepEqual(got, want) {
				t.Errorf("undelivered %+v, want %+v", got, want)
			}
			if warned := strings.Contains(s.Warnings(), "never reached the client"); warned != stalls {
				t.Errorf("warned %v, want %v:\n%s", warned, stalls, s.Warnings())
			}
			for _, w := range tt.named {
				if !strings.Contains(s.Warnings(), w) {
					t.Errorf("the warning lacks %q:\n%s", w, s.Warnings())
				}
			}
			if r := s.Report(); !r.Clean() {
				t.Errorf("the report is not clean, as --strict wants it, though only undelivered messages are: %+v", r)
			}
		})
	}
}

// waitReceived waits until the server has taken a message of method.
func waitReceived(t *testing.T, s *mocktest.Server, method string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) { // polling, with a deadline
		for _, r := range s.Received() {
			if r.Method == method {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server took no %s within 15 s", method)
		}
	}
}

// pollUndelivered waits until the report counts n methods undelivered:
// a session counts what it lost as it ends, on a goroutine of its own.
// With n 0 it gives the report as it is.
func pollUndelivered(s *mocktest.Server, n int) []replay.Undelivered {
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := s.Report().Undelivered
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond) // polling, with a deadline
	}
}
