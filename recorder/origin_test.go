package recorder_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

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
