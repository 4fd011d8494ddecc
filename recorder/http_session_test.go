package recorder_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request that names a session the client has already ended with
// DELETE (a client that did not notice, or a GET stream still draining)
// belongs to that session's record, after its end, not to a new session
// with the same Mcp-Session-Id. go-sdk's server answers it 404.
func TestHTTPProxy_LateTrafficJoinsEndedSession(t *testing.T) {
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	px := startHTTPProxy(t, up+"/mcp")
	endpoint := px.URL + "/mcp"

	resp, body := post(t, endpoint, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q, %s", resp.StatusCode, sid, body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if resp, _ := post(t, endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	del, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
	for k, v := range hdr {
		del.Header.Set(k, v)
	}
	dresp, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	if dresp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %d", dresp.StatusCode)
	}
	late := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if resp, body := post(t, endpoint, late, hdr); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("request after DELETE: %d %s, want go-sdk's 404", resp.StatusCode, body)
	}
	px.Stop()

	got := readCassette(t, px.Cassette)
	var named []recorded
	for _, s := range got {
		if s.info.HTTPSessionID == sid {
			named = append(named, s)
		}
	}
	if len(named) != 1 {
		t.Fatalf("%d cassette sessions carry Mcp-Session-Id %s, want 1", len(named), sid)
	}
	s := named[0]
	if s.info.End == nil || s.info.End.Reason != store.EndClosed {
		t.Errorf("end = %+v, want closed (by the DELETE, not by what came after)", s.info.End)
	}
	found := false
	for _, m := range s.msgs {
		found = found || (m.Dir == store.C2S && string(m.Frame) == late)
	}
	if !found {
		t.Errorf("the late request %s is not in the session's record: %q", late, methods(s.msgs))
	}
}

// A server without sessions (go-sdk's stateless handler) answers an
// initialize with no Mcp-Session-Id. The exchange that follows on the same
// client connection is that client's: it joins the initialize's session
// instead of starting another.
func TestHTTPProxy_SessionlessInitializeKeepsItsConnection(t *testing.T) {
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	px := startHTTPProxy(t, up+"/mcp")
	endpoint := px.URL + "/mcp"
	resp, body := post(t, endpoint, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"nosession","version":"1"}}}`, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize: %d, session %q, %s; want 200 and no session", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	post(t, endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	if resp, body := post(t, endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, hdr); resp.StatusCode != 200 {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	px.Stop()

	got := readCassette(t, px.Cassette)
	if len(got) != 1 {
		var all [][]string
		for _, s := range got {
			all = append(all, methods(s.msgs))
		}
		t.Fatalf("%d sessions recorded, want 1 for one client on one connection: %q", len(got), all)
	}
	want := []string{"c2s request initialize", "s2c response id=1", "c2s notification notifications/initialized", "c2s request tools/list", "s2c response id=2"}
	if m := methods(got[0].msgs); !slices.Equal(m, want) {
		t.Errorf("recorded %q, want %q", m, want)
	}
	if h := got[0].info.Handshake; h.Method != "initialize" {
		t.Errorf("handshake = %+v, want the initialize", h)
	}
}

// A client of a server without sessions sends its GET without a session
// id; go-sdk's stateless handler refuses it with 405. The refusal is on
// record, in the session of the connection it came on, as its POSTs are
// (it tells a replay that the server offered no stream), as an exchange
// that carried no message.
func TestHTTPProxy_SessionlessGetRefusalRecorded(t *testing.T) {
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	px := startHTTPProxy(t, up+"/mcp")
	endpoint := px.URL + "/mcp"
	post(t, endpoint, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"nosession","version":"1"}}}`, nil)
	req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d, want go-sdk's 405", resp.StatusCode)
	}
	px.Stop()

	got := readCassette(t, px.Cassette)
	if len(got) != 1 {
		t.Fatalf("%d sessions recorded, want 1 for one client on one connection", len(got))
	}
	// A lawful answer that carries no message: a bare exchange, not a
	// frame the inspector would count among the session's errors.
	bare := got[0].info.Bare
	if len(bare) != 1 || bare[0].HTTP.Method != http.MethodGet || bare[0].HTTP.Status != http.StatusMethodNotAllowed ||
		http.Header(bare[0].HTTP.ResponseHeader).Get("Allow") != "POST" || !strings.Contains(bare[0].Note, "Method Not Allowed") {
		t.Errorf("bare exchanges %+v; want the GET's 405 (Allow: POST, its page in the note) from the server", bare)
	}
	for _, m := range got[0].msgs {
		if m.HTTP != nil && m.HTTP.Method == http.MethodGet {
			t.Errorf("the GET's page recorded as a frame too: %q", m.Frame)
		}
	}
}

// 2026-07-28 traffic carries no session id, so the proxy records a client
// connection as one session: everything a go-sdk client sends over its one
// kept-alive connection lands in one session, which ends (EOF) when the
// client closes the connection, not only when mcpspy stops.
func TestHTTPProxy_StatelessConnectionIsOneSession(t *testing.T) {
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	px := startHTTPProxy(t, up+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "one-conn", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint("call ", i)}}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	cs.Close()
	hc.CloseIdleConnections()

	var got []recorded
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got = readCassette(t, px.Cassette)
		if len(got) > 0 && got[0].info.End != nil || time.Now().After(deadline) {
			break
		}
	}
	px.Stop()
	if len(got) != 1 {
		var all [][]string
		for _, s := range got {
			all = append(all, methods(s.msgs))
		}
		t.Fatalf("%d sessions recorded, want 1 for one connection: %q", len(got), all)
	}
	s := got[0]
	if s.info.End == nil || s.info.End.Reason != store.EndEOF {
		t.Errorf("end = %+v, want eof when the client closed its connection (before mcpspy stopped)", s.info.End)
	}
	calls := 0
	for _, m := range methods(s.msgs) {
		if m == "c2s request tools/call" {
			calls++
		}
	}
	if m := methods(s.msgs); len(m) == 0 || m[0] != "c2s request server/discover" || calls != 3 {
		t.Errorf("recorded %q, want server/discover then the 3 calls", m)
	}
}

// A client's DELETE is answered as soon as the upstream answers it, not
// after the cassette has stored the session's end: commits are serialized,
// and 200 go-sdk clients closing at once on a loaded machine once waited
// past go-sdk's 5 s limit for the DELETE (TestConcurrent_HTTPSessions).
// Here another process holds the cassette's lock while the client closes,
// so a proxy that waited for the disk would answer after store.LockTimeout
// (10 s): go-sdk's Close would fail. The end is still recorded once the
// lock is let go.
func TestHTTPProxy_DeleteDoesNotWaitForTheCassette(t *testing.T) {
	px := proxiedGoSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connectGoSDK(ctx, t, px, "closer")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	unlock := peertest.HoldLock(t, px.Cassette) // waits for the writer to let the file go
	closeErr := cs.Close()
	unlock()
	if closeErr != nil {
		t.Fatalf("go-sdk's Close (its DELETE) while the cassette was locked: %v", closeErr)
	}
	px.Stop()
	for _, s := range readCassette(t, px.Cassette) {
		if s.info.HTTPSessionID != cs.ID() {
			continue // go-sdk's sessionless server/discover probe
		}
		if s.info.End == nil || s.info.End.Reason != store.EndClosed {
			t.Errorf("session %s ended %+v, want closed (by the DELETE)", s.info.ID, s.info.End)
		}
		return
	}
	t.Errorf("no session with Mcp-Session-Id %s recorded", cs.ID())
}

// A client's first request is forwarded without waiting for the cassette:
// the proxy starts the session's record on its first frame, and used to
// make it with a write transaction there, which waited for every commit
// before it and, while another process held the cassette, for up to
// store.LockTimeout (10 s), after which the session went unrecorded. Here
// a go-sdk client connects, lists tools and calls one while another
// process holds the lock; once it is let go, the session is all there.
func TestHTTPProxy_NewSessionDoesNotWaitForTheCassette(t *testing.T) {
	px := proxiedGoSDK(t)
	unlock := peertest.HoldLock(t, px.Cassette)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connectGoSDK(ctx, t, px, "early")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "while locked"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "while locked" {
		t.Errorf("echo answered %+v", res.Content)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	unlock()
	px.Stop()
	checkLockedSession(t, px.Cassette, func(info store.SessionInfo) bool { return info.HTTPSessionID == cs.ID() })
}

// proxiedGoSDK is the proxy in front of a go-sdk server (goSDKServer) over
// Streamable HTTP at /mcp.
func proxiedGoSDK(t *testing.T) *proxyRun {
	t.Helper()
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	return startHTTPProxy(t, up+"/mcp")
}

// connectGoSDK connects a go-sdk client named name through px.
func connectGoSDK(ctx context.Context, t *testing.T, px *proxyRun, name string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// checkLockedSession fails unless the cassette holds the session pick
// chooses, with a go-sdk client's handshake with upstream-go, tools/list
// and tools/call each answered, at dense seqs from 1.
func checkLockedSession(t *testing.T, cassette string, pick func(store.SessionInfo) bool) {
	t.Helper()
	for _, s := range readCassette(t, cassette) {
		if !pick(s.info) {
			continue
		}
		for i, m := range s.msgs {
			if m.Seq != uint64(i+1) {
				t.Errorf("message %d of %s has seq %d", i+1, s.info.ID, m.Seq)
			}
		}
		got := methods(s.msgs)
		want := []string{"c2s request initialize", "s2c response id=", "c2s notification notifications/initialized",
			"c2s request tools/list", "s2c response id=", "c2s request tools/call", "s2c response id="}
		rest := want
		for _, m := range got {
			if len(rest) > 0 && strings.HasPrefix(m, rest[0]) {
				rest = rest[1:]
			}
		}
		if len(rest) > 0 {
			t.Errorf("session %s recorded:\n%s\nmissing, in this order: %q", s.info.ID, strings.Join(got, "\n"), rest)
		}
		if h := s.info.Handshake; h.Method != "initialize" || !strings.Contains(string(h.ServerInfo), "upstream-go") {
			t.Errorf("session %s handshake %+v, want initialize with upstream-go", s.info.ID, h)
		}
		return
	}
	t.Errorf("no such session in %s: %+v", cassette, readCassette(t, cassette))
}
