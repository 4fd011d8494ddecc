package recorder_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// wsServer serves a go-sdk MCP server over WebSocket (subprotocol "mcp")
// and reports the close code each connection ended with.
func wsServer(tb testing.TB) (string, <-chan int) {
	tb.Helper()
	codes := make(chan int, 16)
	base := serveHTTP(tb, gosdk.WebSocketHandler(goSDKServer(), codes))
	return "ws" + strings.TrimPrefix(base, "http"), codes
}

func startWSProxy(tb testing.TB, upstream string) (wsURL, cassette string, stop func()) {
	tb.Helper()
	u, _ := url.Parse(upstream)
	cassette, w := testWriter(tb, "ws.db")
	p := &recorder.WSProxy{Upstream: u, Writer: w, Redact: recorder.NewHTTPRedactor(nil),
		Info: store.SessionInfo{Upstream: upstream, Recorder: "test"}}
	addr, stop := runProxy(tb, p.Serve, w)
	return "ws://" + addr, cassette, stop
}

// The TS SDK's WebSocketClientTransport (which insists on subprotocol
// "mcp") talks to a go-sdk server through the proxy.
func TestWSProxy_TSClient(t *testing.T) {
	up, codes := wsServer(t)
	px, cassette, stop := startWSProxy(t, up+"/ws")
	out := runTSClient(t, "ws", px+"/ws", "echo", `{"text":"over ws"}`, "progress", `{"steps":2}`)
	if out.Echo != "over ws" || out.Progress > 2 || out.Server != "upstream-go" { // see TestTSClient_ProgressRace
		t.Errorf("client saw %+v", out)
	}
	select {
	case code := <-codes:
		if code != websocket.CloseNoStatusReceived && code != websocket.CloseNormalClosure {
			t.Errorf("server saw close code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server connection did not end after the client closed")
	}
	stop()
	got := readCassette(t, cassette)
	if len(got) != 1 {
		t.Fatalf("want 1 session, got %d", len(got))
	}
	s := got[0]
	if s.info.Transport != store.TransportWebSocket || s.info.End == nil || s.info.End.Reason != store.EndClosed {
		t.Errorf("session info %+v end %+v", s.info, s.info.End)
	}
	if h := s.info.Handshake; h.Method != "initialize" || !strings.Contains(string(h.ServerInfo), "upstream-go") {
		t.Errorf("handshake %+v", h)
	}
	progress := 0
	for _, m := range s.msgs {
		if m.HTTP == nil || m.HTTP.Stream != "ws" || m.HTTP.WSOpcode != websocket.TextMessage || m.HTTP.Status != 101 {
			t.Errorf("seq %d meta %+v", m.Seq, m.HTTP)
		}
		if jsonrpc.Classify(m.Frame).Method == "notifications/progress" {
			progress++
		}
		if jsonrpc.Classify(m.Frame).Kind == jsonrpc.Malformed {
			t.Errorf("seq %d malformed: %s", m.Seq, m.Frame)
		}
	}
	if testing.Verbose() {
		for _, m := range s.msgs {
			t.Logf("%d %s %s", m.Seq, m.Dir, m.Frame)
		}
	}
	if progress != 2 {
		t.Errorf("recorded %d progress notifications, want 2:\n%s", progress, strings.Join(methods(s.msgs), "\n"))
	}
	checkWSThroughHAR(t, cassette)
}

// checkWSThroughHAR: the WebSocket session, exported as a HAR (its frames
// in _webSocketMessages, as Chrome saves them) and imported, is the same
// session: the same frames, directions, opcodes and order, the same
// upgrade, times to the microsecond.
func checkWSThroughHAR(t *testing.T, cassette string) {
	t.Helper()
	tape, err := store.Load(cassette)
	if err != nil {
		t.Fatal(err)
	}
	h, skipped := store.BuildHAR(tape, "test")
	if len(skipped) != 0 {
		t.Fatalf("the HAR left out %v", skipped)
	}
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := store.ImportHAR(&buf, "ws.har", store.HARImportOptions{Redact: recorder.NewHTTPRedactor(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 1 || got.Sessions[0].Info.Transport != store.TransportWebSocket || got.Sessions[0].Info.Upstream != tape.Sessions[0].Info.Upstream {
		t.Fatalf("imported %+v, want one WebSocket session to %s", got.Sessions, tape.Sessions[0].Info.Upstream)
	}
	want, imported := tape.Sessions[0].Messages, got.Sessions[0].Messages
	if len(imported) != len(want) {
		t.Fatalf("imported %d messages, recorded %d", len(imported), len(want))
	}
	for i, m := range want {
		g := imported[i]
		if g.Seq != m.Seq || g.Dir != m.Dir || !bytes.Equal(g.Frame, m.Frame) || g.HTTP.WSOpcode != m.HTTP.WSOpcode ||
			g.HTTP.Path != m.HTTP.Path || g.HTTP.Status != 101 || !g.Time.Equal(m.Time.Truncate(time.Microsecond)) {
			t.Errorf("message %d: imported %+v %s at %v, recorded %+v %s at %v", i, g.HTTP, g.Frame, g.Time, m.HTTP, m.Frame, m.Time)
		}
	}
}

// Close codes pass through both ways and end up in the session's end; the
// subprotocol the upstream chose reaches the client.
func TestWSProxy_CloseCodeAndSubprotocol(t *testing.T) {
	up, codes := wsServer(t)
	px, cassette, stop := startWSProxy(t, up)
	d := websocket.Dialer{Subprotocols: []string{"other", "mcp"}}
	c, _, err := d.Dial(px, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subprotocol() != "mcp" {
		t.Errorf("subprotocol = %q, want the upstream's choice mcp", c.Subprotocol())
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, pong, err := c.ReadMessage(); err != nil || !strings.Contains(string(pong), `"id":1`) {
		t.Fatalf("ping answer %s, %v", pong, err)
	}
	if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "bye")); err != nil {
		t.Fatal(err)
	}
	var ce *websocket.CloseError
	for {
		if _, _, err = c.ReadMessage(); err != nil {
			break
		}
	}
	if !errors.As(err, &ce) || ce.Code != 4000 {
		t.Errorf("client read %v, want the server's close 4000 passed back", err)
	}
	c.Close()
	select {
	case code := <-codes:
		if code != 4000 {
			t.Errorf("server saw close code %d, want 4000", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not see the close")
	}
	stop()
	got := readCassette(t, cassette)
	if len(got) != 1 || got[0].info.End == nil || got[0].info.End.CloseCode != 4000 {
		t.Fatalf("sessions %+v", got)
	}
	if m := methods(got[0].msgs); strings.Join(m, ",") != "c2s request ping,s2c response id=1" {
		t.Errorf("recorded %q", m)
	}
}

// Peer surprise, written down: the TS SDK 1.32.2 client handles a response
// at once but a notification a task later, so progress notifications that
// reach it in the same read as their result are dropped (the progress
// handler is gone by then). This happens talking to the server directly,
// without mcpspy, so a client-side progress count is only a lower bound;
// recordings are checked against the cassette instead.
func TestTSClient_ProgressRace(t *testing.T) {
	up, _ := wsServer(t)
	direct := runTSClient(t, "ws", up, "echo", `{"text":"direct"}`, "progress", `{"steps":2}`)
	if direct.ProgressResult != "done 2 steps" || direct.Progress > 2 {
		t.Fatalf("client saw %+v", direct)
	}
	t.Logf("TS client directly on a go-sdk server over WebSocket saw %d of 2 progress notifications sent back to back with the result", direct.Progress)
}

// A WebSocket connection is pumped without waiting for the cassette, as
// an HTTP session's first request is (TestHTTPProxy_NewSessionDoesNotWaitForTheCassette):
// the proxy used to make the session's record before pumping, which
// waited while another process held the cassette and, past
// store.LockTimeout, left the connection unrecorded.
func TestWSProxy_NewSessionDoesNotWaitForTheCassette(t *testing.T) {
	up, _ := wsServer(t)
	px, cassette, stop := startWSProxy(t, up)
	unlock := peertest.HoldLock(t, cassette)
	c, _, err := (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial(px, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(id int, method, params string) string {
		t.Helper()
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
		if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("waiting for the answer to %s: %v", method, err)
			}
			if s := jsonrpc.Classify(msg); s.Kind == jsonrpc.Response && s.ID == strconv.Itoa(id) {
				return string(msg)
			}
		}
	}
	call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"early","version":"1"}}`)
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	call(2, "tools/list", `{}`)
	if got := call(3, "tools/call", `{"name":"echo","arguments":{"text":"while locked"}}`); !strings.Contains(got, "while locked") {
		t.Errorf("echo answered %s", got)
	}
	if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")); err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, _, err = c.ReadMessage()
	}
	unlock()
	stop()
	checkLockedSession(t, cassette, func(info store.SessionInfo) bool {
		return info.Transport == store.TransportWebSocket && info.End != nil && info.End.CloseCode == websocket.CloseNormalClosure
	})
}
