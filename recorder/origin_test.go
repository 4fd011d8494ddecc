package recorder_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/recorder"
)

func TestOriginPolicy_Permits(t *testing.T) {
	tests := []struct {
		name    string
		origin  string
		allowed []string
		want    bool
	}{
		{"no Origin: not a browser", "", nil, true},
		{"localhost", "http://localhost:6274", nil, true},
		{"127.0.0.1", "http://127.0.0.1:3000", nil, true},
		{"::1", "http://[::1]:8080", nil, true},
		{"another site", "https://evil.example", nil, false},
		{"a name that only starts like localhost", "http://localhost.evil.example", nil, false},
		{"allowed by name", "https://app.example", []string{"https://app.example"}, true},
		{"not the allowed one", "https://app.example:444", []string{"https://app.example"}, false},
		{"star", "https://anything.example", []string{"*"}, true},
		{"garbage", "::::", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if got := (recorder.OriginPolicy{Allowed: tt.allowed}).Permits(r); got != tt.want {
				t.Errorf("Permits(%q) = %v, want %v", tt.origin, got, tt.want)
			}
		})
	}
}

// A page on another site gets a 403 from the proxy and never reaches the
// upstream; a local page and a non-browser client go through.
func TestHTTPProxy_RefusesForeignOrigin(t *testing.T) {
	var reached atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer up.Close()
	px := startHTTPProxy(t, up.URL+"/mcp")
	post := func(origin string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, px.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post("https://evil.example")
	if status != http.StatusForbidden || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "--allow-origin") {
		t.Errorf("foreign origin: %d %s", status, body)
	}
	if reached.Load() != 0 {
		t.Fatalf("a refused request reached the upstream")
	}
	for _, origin := range []string{"", "http://localhost:6274"} {
		if status, body := post(origin); status != http.StatusAccepted {
			t.Errorf("origin %q: %d %s", origin, status, body)
		}
	}
	if reached.Load() != 2 {
		t.Errorf("upstream reached %d times, want 2", reached.Load())
	}
}

// The WebSocket proxy checks Origin too, before it dials the upstream: a
// page on another site cannot open an MCP connection through a proxy on
// localhost. A local page goes through.
func TestWSProxy_RefusesForeignOrigin(t *testing.T) {
	var reached atomic.Int32
	ws := gosdk.WebSocketHandler(goSDKServer(), nil)
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		ws.ServeHTTP(w, r)
	}))
	px, cassette, stop := startWSProxy(t, "ws"+strings.TrimPrefix(up, "http")+"/ws")
	dial := func(origin string) (*websocket.Conn, *http.Response, error) {
		return (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial(px+"/ws", http.Header{"Origin": {origin}})
	}
	conn, resp, err := dial("https://evil.example")
	if err == nil {
		conn.Close()
		t.Fatal("a foreign origin opened a WebSocket through the proxy")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v, response %+v; want 403", err, resp)
	}
	if body, _ := io.ReadAll(resp.Body); !strings.Contains(string(body), "--allow-origin") {
		t.Errorf("403 body %q does not say how to permit an origin", body)
	}
	if reached.Load() != 0 {
		t.Fatal("a refused handshake reached the upstream")
	}
	// A local page; the upstream's own origin, since gorilla's upgrader
	// upstream refuses any other (the proxy passes Origin on unchanged).
	conn, _, err = dial(up)
	if err != nil {
		t.Fatalf("local origin: %v", err)
	}
	conn.Close()
	if reached.Load() != 1 {
		t.Errorf("upstream reached %d times, want 1", reached.Load())
	}
	stop()
	if got := readCassette(t, cassette); len(got) != 1 {
		t.Errorf("%d sessions recorded, want 1 (the refused handshake is none)", len(got))
	}
}
