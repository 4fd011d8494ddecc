package recorder_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

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
