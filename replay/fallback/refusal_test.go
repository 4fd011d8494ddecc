package fallback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/store"
)

// gateway stands in front of go-sdk's server as a rate limiter or a
// restarted load balancer would: it answers the next POST that calls the
// tool "add" with a bare status of its own, once.
type gateway struct {
	next http.Handler

	mu     sync.Mutex
	status int
	header http.Header
	sawSID string // the Mcp-Session-Id of the POST it refused
}

func (g *gateway) refuseNextAdd(status int, header http.Header) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status, g.header = status, header
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.mu.Lock()
		status, header := g.status, g.header
		if status != 0 && bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte(`"add"`)) {
			g.status, g.sawSID = 0, r.Header.Get("Mcp-Session-Id")
			g.mu.Unlock()
			for k, vs := range header {
				w.Header()[k] = vs
			}
			http.Error(w, "the gateway refuses", status)
			return
		}
		g.mu.Unlock()
	}
	g.next.ServeHTTP(w, r)
}

// refusalsSeen is a client transport that keeps what each 4xx or 5xx
// answer to the client looked like: "STATUS Retry-After=… body".
type refusalsSeen struct {
	mu   sync.Mutex
	seen []string
}

func (s *refusalsSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, fmt.Sprintf("%d Retry-After=%q Set-Cookie=%q %q", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Set-Cookie"), body))
	return resp, nil
}

// TestFallback_PassesTheServersRefusal: a request the fallback's server
// refuses with a bare status reaches the live client as that status, as it
// would have without mcpmock, and go-sdk's client acts on it as on the
// real server's, with the headers a client acts on and the body: a 503
// fails the call and keeps the session; a 404 to the
// server's session ends the client's session (ErrSessionMissing), and a
// new one works, with a new session on the server.
func TestFallback_PassesTheServersRefusal(t *testing.T) {
	gw := &gateway{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, nil)}
	real := httptest.NewServer(gw)
	defer real.Close()
	db := cassetteDB(t, "gosdk.db", gosdkCassette)
	_, fb, endpoint, stop := replayWithFallback(t, db, real.URL)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := &refusalsSeen{}
	hc := &http.Client{Transport: seen}
	open := func() *client {
		return connect(ctx, t, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc})
	}
	add := func(c *client) error {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
		return err
	}

	c := open()
	defer c.cs.Close()
	if got := addSum(ctx, t, c, 40, 2); got != 42 { // the server session starts
		t.Fatalf("add: %d", got)
	}

	gw.refuseNextAdd(http.StatusServiceUnavailable, http.Header{"Retry-After": {"7"}, "Set-Cookie": {"lb=s3cret"}})
	err := add(c)
	// go-sdk's words for a transient status: its status text, the
	// session kept (no JSON-RPC error of mcpmock's to show).
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") || strings.Contains(err.Error(), "mcpmock") {
		t.Fatalf("add refused with 503: %v; want go-sdk's error for a 503", err)
	}
	if got := addSum(ctx, t, c, 40, 2); got != 42 {
		t.Errorf("add after the 503: %d", got)
	}

	gw.refuseNextAdd(http.StatusNotFound, nil)
	if err := add(c); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Fatalf("add refused with 404 for the server's session: %v; want ErrSessionMissing", err)
	}
	gw.mu.Lock()
	sid := gw.sawSID
	gw.mu.Unlock()
	if sid == "" {
		t.Fatal("the refused POST carried no Mcp-Session-Id: the 404 tested nothing")
	}
	again := open()
	defer again.cs.Close()
	if got := addSum(ctx, t, again, 40, 2); got != 42 {
		t.Errorf("add in a new session: %d", got)
	}
	// What the client got: go-sdk's 404 after the expiry is mcpmock's
	// own (the session is gone), not the server's.
	want := []string{
		`503 Retry-After="7" Set-Cookie="" "the gateway refuses\n"`,
		`404 Retry-After="" Set-Cookie="" "the gateway refuses\n"`,
	}
	seen.mu.Lock()
	got := slices.Clone(seen.seen)
	seen.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("the client got\n%q\nwant\n%q", got, want)
	}
	if st := fb.Stats(); len(st.Failed) != 2 || !strings.Contains(st.Failed[0], "HTTP 503") || !strings.Contains(st.Failed[1], "HTTP 404") {
		t.Errorf("stats %+v, want the two refusals failed", st)
	}

	stop()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	// The recording keeps each refusal on the request it refused, with
	// the response headers after redaction, and its body as a frame on
	// the request's stream, as mcpspy record keeps them.
	var refused, bodies []string
	answers := 0
	for _, s := range sessions(t, db) {
		refusedOn := map[uint64]bool{} // HTTP streams of refused POSTs
		for _, m := range s.Messages {
			status, _ := m.HTTP.Refusal()
			switch {
			case status != 0 && m.Dir == store.C2S:
				h := http.Header(m.HTTP.ResponseHeader)
				refused = append(refused, fmt.Sprintf("%d retry-after=%q cookie=%q", status, h.Get("Retry-After"), h.Get("Set-Cookie")))
				refusedOn[m.HTTP.StreamID] = true
			case status != 0:
				if !refusedOn[m.HTTP.StreamID] || m.HTTP.Stream != store.StreamJSON {
					t.Errorf("%s seq %d: a refusal's body on stream %s#%d, not on its request's", s.Info.ID, m.Seq, m.HTTP.Stream, m.HTTP.StreamID)
				}
				bodies = append(bodies, fmt.Sprintf("%d %q", status, m.Frame))
			case m.Dir == store.S2C && s.Info.Name == "fallback":
				answers++
				if ct := http.Header(m.HTTP.ResponseHeader).Get("Content-Type"); ct != "text/event-stream" {
					t.Errorf("%s seq %d: recorded Content-Type %q, want go-sdk's text/event-stream", s.Info.ID, m.Seq, ct)
				}
			}
		}
	}
	if answers == 0 {
		t.Error("the fallback recorded no answer")
	}
	if want := []string{`503 retry-after="7" cookie="[redacted]"`, `404 retry-after="" cookie=""`}; !slices.Equal(refused, want) {
		t.Errorf("recorded refusals\n%q\nwant\n%q", refused, want)
	}
	if want := []string{`503 "the gateway refuses\n"`, `404 "the gateway refuses\n"`}; !slices.Equal(bodies, want) {
		t.Errorf("recorded refusal bodies\n%q\nwant\n%q", bodies, want)
	}
}
