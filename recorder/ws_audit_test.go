package recorder_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/store"
)

// wsEvent is one thing a WebSocket peer read: a message (kind "msg", with
// its type), a ping or pong (with its payload), or the end of the
// connection ("close" with the code and reason, or "err").
type wsEvent struct {
	kind string
	mt   int
	data string
	code int
}

func (e wsEvent) String() string {
	return fmt.Sprintf("%s type=%d code=%d %q", e.kind, e.mt, e.code, e.data)
}

// wsPeer is one end of a WebSocket connection the test watches. Its
// reader answers pings with pongs and closes with the same code and
// "re: " and the reason, as a well-behaved peer does, and reports every
// message and control frame on events.
type wsPeer struct {
	conn   *websocket.Conn
	events chan wsEvent
}

func newWSPeer(c *websocket.Conn) *wsPeer {
	p := &wsPeer{conn: c, events: make(chan wsEvent, 64)}
	c.SetPingHandler(func(data string) error {
		p.events <- wsEvent{kind: "ping", data: data}
		return ignoreWSClosed(c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second)))
	})
	c.SetPongHandler(func(data string) error {
		p.events <- wsEvent{kind: "pong", data: data}
		return nil
	})
	c.SetCloseHandler(func(code int, text string) error {
		msg := []byte{}
		if code != websocket.CloseNoStatusReceived {
			msg = websocket.FormatCloseMessage(code, "re: "+text)
		}
		return ignoreWSClosed(c.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second)))
	})
	return p
}

func ignoreWSClosed(err error) error {
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

// read reports what the peer reads until the connection ends; echo sends
// each message straight back with its type (the peer's only writer of
// data frames).
func (p *wsPeer) read(echo bool) {
	defer close(p.events)
	for {
		mt, data, err := p.conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				p.events <- wsEvent{kind: "close", code: ce.Code, data: ce.Text}
			} else {
				p.events <- wsEvent{kind: "err", data: err.Error()}
			}
			return
		}
		p.events <- wsEvent{kind: "msg", mt: mt, data: string(data)}
		if echo {
			if err := p.conn.WriteMessage(mt, data); err != nil {
				return
			}
		}
	}
}

// next is the peer's next event, or fails the test after 10 s.
func (p *wsPeer) next(tb testing.TB, who string) wsEvent {
	tb.Helper()
	select {
	case e, ok := <-p.events:
		if !ok {
			tb.Fatalf("%s: connection over, no more events", who)
		}
		return e
	case <-time.After(10 * time.Second):
		tb.Fatalf("%s: nothing read in 10 s", who)
	}
	return wsEvent{}
}

// mirrorUpstream is a bare WebSocket server (subprotocol "mcp") that echoes
// every message with its own type. Each connection it accepts is handed
// to the test on the channel, for the test to watch and drive.
func mirrorUpstream(tb testing.TB) (wsURL string, conns <-chan *wsPeer) {
	tb.Helper()
	ch := make(chan *wsPeer, 4)
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	base := serveHTTP(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		p := newWSPeer(c)
		ch <- p
		p.read(true)
	}))
	return "ws" + strings.TrimPrefix(base, "http"), ch
}

// wsThroughProxy connects a client through a WSProxy to a mirrorUpstream
// and returns both ends; the client's reader runs until it ends.
func wsThroughProxy(t *testing.T) (client, upstream *wsPeer, cassette string, stop func()) {
	t.Helper()
	up, conns := mirrorUpstream(t)
	px, cassette, stop := startWSProxy(t, up)
	c, _, err := (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial(px, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	client = newWSPeer(c)
	go client.read(false)
	select {
	case upstream = <-conns:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream got no connection")
	}
	return client, upstream, cassette, stop
}

// Each message, text or binary, reaches the upstream as exactly one
// message of the same type, comes back the same way, and is recorded
// once with its opcode.
func TestWSProxy_FramesOneToOneWithTheirType(t *testing.T) {
	for _, tc := range []struct {
		name string
		mt   int
		data string
	}{
		{"text", websocket.TextMessage, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"binary", websocket.BinaryMessage, "\x00\x01binary\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, upstream, cassette, stop := wsThroughProxy(t)
			const marker = `{"jsonrpc":"2.0","method":"notifications/marker"}`
			for _, f := range []wsEvent{{mt: tc.mt, data: tc.data}, {mt: websocket.TextMessage, data: marker}} {
				if err := client.conn.WriteMessage(f.mt, []byte(f.data)); err != nil {
					t.Fatal(err)
				}
				want := wsEvent{kind: "msg", mt: f.mt, data: f.data}
				// The marker comes next only if the first frame passed once.
				if got := upstream.next(t, "upstream"); got != want {
					t.Fatalf("upstream read %v, want %v", got, want)
				}
				if got := client.next(t, "client"); got != want {
					t.Fatalf("client read %v, want %v", got, want)
				}
			}
			stop()
			got := readCassette(t, cassette)
			if len(got) != 1 {
				t.Fatalf("want 1 session, got %d", len(got))
			}
			var rec []string
			for _, m := range got[0].msgs {
				rec = append(rec, fmt.Sprintf("%s %d %q", m.Dir, m.HTTP.WSOpcode, m.Frame))
			}
			want := []string{
				fmt.Sprintf("%s %d %q", store.C2S, tc.mt, tc.data),
				fmt.Sprintf("%s %d %q", store.S2C, tc.mt, tc.data),
				fmt.Sprintf("%s %d %q", store.C2S, websocket.TextMessage, marker),
				fmt.Sprintf("%s %d %q", store.S2C, websocket.TextMessage, marker),
			}
			if strings.Join(rec, "\n") != strings.Join(want, "\n") {
				t.Errorf("recorded\n%s\nwant\n%s", strings.Join(rec, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A ping from either side reaches the other, and the other's pong comes
// back to the side that pinged: the proxy answers neither itself.
func TestWSProxy_PingsAndPongsPassThrough(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pinger func(client, upstream *wsPeer) (from, to *wsPeer)
	}{
		{"client pings", func(c, u *wsPeer) (*wsPeer, *wsPeer) { return c, u }},
		{"upstream pings", func(c, u *wsPeer) (*wsPeer, *wsPeer) { return u, c }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, upstream, _, _ := wsThroughProxy(t)
			from, to := tc.pinger(client, upstream)
			payload := "are you there? " + tc.name
			if err := from.conn.WriteControl(websocket.PingMessage, []byte(payload), time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if got, want := to.next(t, "pinged side"), (wsEvent{kind: "ping", data: payload}); got != want {
				t.Errorf("the pinged side read %v, want %v", got, want)
			}
			if got, want := from.next(t, "pinging side"), (wsEvent{kind: "pong", data: payload}); got != want {
				t.Errorf("the pinging side read %v, want %v", got, want)
			}
		})
	}
}

// A close frame reaches the other side with its code and reason, the
// answer comes back with its own, and the session's end holds the code.
func TestWSProxy_CloseReasonPassesThrough(t *testing.T) {
	for _, tc := range []struct {
		name   string
		closer func(client, upstream *wsPeer) (from, to *wsPeer)
		code   int
	}{
		{"client closes", func(c, u *wsPeer) (*wsPeer, *wsPeer) { return c, u }, 4001},
		{"upstream closes", func(c, u *wsPeer) (*wsPeer, *wsPeer) { return u, c }, 4002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, upstream, cassette, stop := wsThroughProxy(t)
			from, to := tc.closer(client, upstream)
			reason := "bye from " + tc.name
			if err := from.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(tc.code, reason), time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if got, want := to.next(t, "closed side"), (wsEvent{kind: "close", code: tc.code, data: reason}); got != want {
				t.Errorf("the closed side read %v, want %v", got, want)
			}
			if got, want := from.next(t, "closing side"), (wsEvent{kind: "close", code: tc.code, data: "re: " + reason}); got != want {
				t.Errorf("the closing side read %v, want the answer %v", got, want)
			}
			stop()
			got := readCassette(t, cassette)
			if len(got) != 1 {
				t.Fatalf("want 1 session, got %d", len(got))
			}
			if end := got[0].info.End; end == nil || end.CloseCode != tc.code {
				t.Errorf("session end %+v, want close code %d", end, tc.code)
			}
		})
	}
}

// A peer whose connection drops without a close frame: the other side's
// connection is dropped alike. gorilla reports such an end as close code
// 1006, which RFC 6455 (7.4.1) reserves for that report: it must never be
// sent in a close frame (the ws library, under the TypeScript SDK, fails
// on one with "invalid status code 1006"). The session records 1006.
func TestWSProxy_DroppedConnectionIsDropped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drops func(client, upstream *wsPeer) (dropped, other *wsPeer)
	}{
		{"upstream drops", func(c, u *wsPeer) (*wsPeer, *wsPeer) { return u, c }},
		{"client drops", func(c, u *wsPeer) (*wsPeer, *wsPeer) { return c, u }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, upstream, cassette, stop := wsThroughProxy(t)
			dropped, other := tc.drops(client, upstream)
			dropped.conn.NetConn().Close()
			want := wsEvent{kind: "close", code: websocket.CloseAbnormalClosure, data: "unexpected EOF"}
			if got := other.next(t, "the other side"); got != want {
				t.Errorf("the other side read %v, want its connection dropped (%v)", got, want)
			}
			stop()
			got := readCassette(t, cassette)
			if len(got) != 1 {
				t.Fatalf("want 1 session, got %d", len(got))
			}
			if end := got[0].info.End; end == nil || end.CloseCode != websocket.CloseAbnormalClosure {
				t.Errorf("session end %+v, want close code 1006", end)
			}
		})
	}
}

// mcpspy stopped (SIGINT) with a WebSocket connection open drops both
// sides, keeps what passed, and records that the session ended because
// mcpspy was interrupted, not with a close code neither peer sent.
func TestWSProxy_StoppedMidConnection(t *testing.T) {
	client, upstream, cassette, stop := wsThroughProxy(t)
	const frame = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	if err := client.conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	if got := upstream.next(t, "upstream"); got.data != frame {
		t.Fatalf("upstream read %v", got)
	}
	if got := client.next(t, "client"); got.data != frame {
		t.Fatalf("client read %v (the echo)", got)
	}
	stop()
	if got := client.next(t, "client"); got.kind != "err" && got.kind != "close" {
		t.Errorf("client read %v after the stop, want its connection ended", got)
	}
	sessions := readCassette(t, cassette)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(sessions))
	}
	s := sessions[0]
	if len(s.msgs) != 2 || string(s.msgs[0].Frame) != frame {
		t.Errorf("recorded %q, want the frame both ways", flat(sessions))
	}
	if end := s.info.End; end == nil || end.Reason != store.EndSignal || end.Signal != "mcpspy interrupted" {
		t.Errorf("session end %+v, want signal: mcpspy interrupted", end)
	}
}
