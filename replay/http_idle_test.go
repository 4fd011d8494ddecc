package replay_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newHTTPServer serves srv on 127.0.0.1, its ConnState hook wired, and
// stops both when the test ends.
func newHTTPServer(t *testing.T, srv *replay.Server) string {
	t.Helper()
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Config.ConnState = srv.ConnState
	hs.Start()
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return hs.URL + "/mcp"
}

func TestHTTP_SessionIdle(t *testing.T) {
	tests := []struct {
		name    string
		idle    time.Duration
		wait    time.Duration
		expired bool
	}{
		{name: "default keeps a session idle for 29 minutes", wait: 29 * time.Minute},
		{name: "default ends a session idle for 30 minutes", wait: 30 * time.Minute, expired: true},
		{name: "custom idle", idle: time.Second, wait: 2 * time.Second, expired: true},
		{name: "negative never ends it", idle: -1, wait: 1000 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := replay.NewServer([]replay.Source{cassetteOf(t, basicTape...)}, replay.Options{SessionIdle: tt.idle})
			if err != nil {
				t.Fatal(err)
			}
			clock := &fakeClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
			replay.SetClock(srv, clock.now)
			c := &peertest.RawHTTP{T: t, URL: newHTTPServer(t, srv)}
			r := c.Do("POST", initBody, nil)
			bodyOf(t, r)
			c.SessionID = r.Header.Get("Mcp-Session-Id")

			clock.advance(tt.wait)
			want := http.StatusOK
			if tt.expired {
				want = http.StatusNotFound
			}
			r = c.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil)
			bodyOf(t, r)
			if r.StatusCode != want {
				t.Fatalf("ping after %s idle: %d, want %d", tt.wait, r.StatusCode, want)
			}
			if tt.expired {
				if r := c.Do("GET", "", map[string]string{"Accept": "text/event-stream"}); r.StatusCode != http.StatusNotFound {
					t.Errorf("GET on an expired session: %d, want 404", r.StatusCode)
				}
				if n := replay.HTTPSessions(srv); n != 0 {
					t.Errorf("%d sessions held after expiry, want 0", n)
				}
			}
		})
	}
}

// A session with an open stream is in use, however long; expired sessions
// nobody asks for again are swept when new ones start.
func TestHTTP_SessionIdleSweep(t *testing.T) {
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t, basicTape...)}, replay.Options{SessionIdle: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	replay.SetClock(srv, clock.now)
	url := newHTTPServer(t, srv)

	streaming := &peertest.RawHTTP{T: t, URL: url}
	r := streaming.Do("POST", initBody, nil)
	bodyOf(t, r)
	streaming.SessionID = r.Header.Get("Mcp-Session-Id")
	get := streaming.Do("GET", "", map[string]string{"Accept": "text/event-stream"})
	defer get.Body.Close()

	for range 5 {
		c := &peertest.RawHTTP{T: t, URL: url}
		bodyOf(t, c.Do("POST", initBody, nil))
	}
	clock.advance(2 * time.Minute)
	c := &peertest.RawHTTP{T: t, URL: url}
	bodyOf(t, c.Do("POST", initBody, nil))
	if n := replay.HTTPSessions(srv); n != 2 {
		t.Errorf("%d sessions held, want 2 (the streaming one and the newest)", n)
	}
	if r := streaming.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil); r.StatusCode != http.StatusOK {
		t.Errorf("ping on the session with an open GET stream: %d, want 200", r.StatusCode)
	}
}
