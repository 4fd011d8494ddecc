package recorder_test

import (
	"net/http"
	"strings"
	"testing"

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

// Hop-by-hop headers (RFC 9110 7.6.1), and those a Connection header
// names, belong to one connection: the proxy drops them both ways. The
// rest pass.
func TestHTTPProxy_HopByHopHeadersDropped(t *testing.T) {
	seen := make(chan http.Header, 1)
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "1")
		w.Header().Set("X-Upstream-End", "1")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	px := startHTTPProxy(t, up)
	resp, _ := post(t, px.URL, rpcBody, map[string]string{
		"Connection":          "X-Client-Hop",
		"X-Client-Hop":        "1",
		"Keep-Alive":          "timeout=5",
		"Proxy-Authorization": "Basic cHJveHk6cGFzcw==",
		"X-Client-End":        "1",
	})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	upHeader := <-seen
	for _, name := range []string{"X-Client-Hop", "Keep-Alive", "Proxy-Authorization"} {
		if v := upHeader.Values(name); len(v) > 0 {
			t.Errorf("upstream got hop-by-hop %s: %q", name, v)
		}
	}
	if c := upHeader.Get("Connection"); strings.Contains(strings.ToLower(c), "x-client-hop") {
		t.Errorf("upstream got Connection: %q", c)
	}
	if upHeader.Get("X-Client-End") != "1" {
		t.Errorf("upstream lost the end-to-end header X-Client-End: %v", upHeader)
	}
	if v := resp.Header.Values("X-Upstream-Hop"); len(v) > 0 {
		t.Errorf("client got hop-by-hop X-Upstream-Hop: %q", v)
	}
	if resp.Header.Get("X-Upstream-End") != "1" {
		t.Errorf("client lost the end-to-end header X-Upstream-End: %v", resp.Header)
	}
}
