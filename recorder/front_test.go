package recorder_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echoUpstream answers every request with a JSON body that names its
// method and echoes its body.
func echoUpstream(t *testing.T) string {
	t.Helper()
	return serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"method":%q,"got":%q}}`, r.Method, body)
	}))
}

// rawExchange writes raw to a new connection to addr and returns all that
// comes back until the proxy closes the connection or idle passes.
func rawExchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, _ := io.ReadAll(c) // ends at the proxy's close, or at the deadline
	return string(got)
}

const rpcBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// countingUpstream serves h on 127.0.0.1 until the test ends, closing
// connections idle for idle (0: never), and counts the connections it
// accepts.
func countingUpstream(t *testing.T, h http.Handler, idle time.Duration) (string, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, IdleTimeout: idle, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), &conns
}

// rawClient is one client connection to a proxy, for requests that must
// share it.
type rawClient struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialProxy(t *testing.T, px *proxyRun) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(px.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c, br: bufio.NewReader(c)}
}

// send writes a POST of body.
func (rc *rawClient) send(body string) {
	rc.t.Helper()
	if _, err := fmt.Fprintf(rc.c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		rc.t.Fatal(err)
	}
}

// post sends a POST of body and reads its answer whole; it returns the
// status.
func (rc *rawClient) post(body string) int {
	rc.t.Helper()
	rc.send(body)
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatalf("POST %s: %v", body, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The proxy's HTTP/1.1 front answers what net/http's server would: bad
// heads get a status and a closed connection, and the framings clients
// use (HTTP/1.0, chunked bodies, 100-continue, several requests on one
// connection) reach the upstream and come back whole.
func TestFront_RawRequests(t *testing.T) {
	px := startHTTPProxy(t, echoUpstream(t))
	post := func(proto, extra, body string) string {
		return fmt.Sprintf("POST /mcp %s\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", proto, extra, len(body), body)
	}
	tests := []struct {
		name string
		raw  string
		want []string // in this order in the answer
		not  string   // must not appear
	}{
		{name: "malformed request line", raw: "GARBAGE\r\n\r\n", want: []string{"HTTP/1.1 400 Bad Request\r\n", "Connection: close"}},
		{name: "HTTP/2 preface", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: []string{"HTTP/1.1 505 "}},
		{name: "no Host", raw: "POST /mcp HTTP/1.1\r\nContent-Length: 0\r\n\r\n", want: []string{"HTTP/1.1 400 "}, not: `"method"`},
		{name: "unknown expectation", raw: post("HTTP/1.1", "Expect: teapot\r\n", rpcBody), want: []string{"HTTP/1.1 417 "}, not: `"method"`},
		{name: "head too large", raw: "POST /mcp HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", want: []string{"HTTP/1.1 431 "}},
		{name: "100-continue", raw: post("HTTP/1.1", "Expect: 100-continue\r\nConnection: close\r\n", rpcBody),
			want: []string{"HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 200 OK\r\n", `"got":"{\"jsonrpc\"`}},
		{name: "HTTP/1.0 ends with the connection", raw: post("HTTP/1.0", "", rpcBody),
			want: []string{"HTTP/1.0 200 OK\r\n", `"method":"POST"`}},
		{name: "HTTP/1.0 keep-alive", raw: post("HTTP/1.0", "Connection: keep-alive\r\n", `{"n":1}`) + post("HTTP/1.0", "", `{"n":2}`),
			want: []string{"HTTP/1.0 200 OK\r\n", "Connection: keep-alive\r\n", `"got":"{\"n\":1}"`, "HTTP/1.0 200 OK\r\n", `"got":"{\"n\":2}"`}},
		{name: "malformed chunked body", raw: "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
			want: []string{"HTTP/1.1 400 Bad Request\r\n", "Connection: close", `"code":-32600`, "could not be read"}, not: `"method"`},
		{name: "chunked request body", raw: "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(rpcBody), rpcBody),
			want: []string{"HTTP/1.1 200 OK\r\n", `\"method\":\"ping\"`}},
		{name: "three requests on one connection", raw: post("HTTP/1.1", "", `{"n":1}`) + "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n" + post("HTTP/1.1", "Connection: close\r\n", `{"n":3}`),
			want: []string{`"got":"{\"n\":1}"`, `"method":"GET"`, `"got":"{\"n\":3}"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rawExchange(t, px.URL, tt.raw)
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("answer lacks %q (in order); got:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			if tt.not != "" && strings.Contains(got, tt.not) {
				t.Errorf("answer has %q, the request should not have reached the upstream:\n%s", tt.not, got)
			}
		})
	}
}

// A HEAD request the front refuses gets the status and headers only: an
// answer to HEAD has no body (RFC 9110 9.3.2), whatever its status.
func TestFront_RefusedHEADHasNoBody(t *testing.T) {
	px := startHTTPProxy(t, echoUpstream(t))
	for _, raw := range []string{
		"HEAD /mcp HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n",
		"HEAD /mcp HTTP/1.1\r\n\r\n", // no Host
	} {
		got := rawExchange(t, px.URL, raw)
		if !strings.HasPrefix(got, "HTTP/1.1 4") || !strings.HasSuffix(got, "\r\n\r\n") {
			t.Errorf("%q: answer %q, want a 4xx head and nothing after it", raw, got)
		}
	}
}

// An upstream that closes idle keep-alive connections (Node closes them
// after 5 s) must not turn the next request into a 502: the proxy sees the
// connection is closed before it writes to it.
func TestHTTPProxy_UpstreamClosesIdleConnection(t *testing.T) {
	up, conns := countingUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}), 20*time.Millisecond)
	rc := dialProxy(t, startHTTPProxy(t, up))
	for i := range 3 {
		if status := rc.post(rpcBody); status != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200", i+1, status)
		}
		time.Sleep(100 * time.Millisecond) // past the upstream's idle timeout
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("upstream saw %d connections, want 3 (one per request, each closed while idle)", n)
	}
}

// Each SSE event reaches the client before the proxy waits for the next:
// here the upstream sends the second event only once the client has the
// first, so a proxy holding events back would never finish.
func TestHTTPProxy_SSEEventBeforeNextWait(t *testing.T) {
	clientHasFirst := make(chan struct{})
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-clientHasFirst:
		case <-time.After(10 * time.Second):
			return
		}
		io.WriteString(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	px := startHTTPProxy(t, up)
	resp, err := http.Post(px.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		lines = append(lines, line)
		if line == "id: 1\n" {
			close(clientHasFirst)
		}
	}
	got := strings.Join(lines, "")
	if !strings.Contains(got, "id: 2\n") {
		t.Fatalf("second event never came (the first was held back?); got:\n%s", got)
	}
}

// A client that leaves while the upstream has not even answered with
// headers cancels the upstream request too.
func TestHTTPProxy_ClientLeavesBeforeHeaders(t *testing.T) {
	started, cancelled, testOver := make(chan struct{}), make(chan struct{}), make(chan struct{})
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // net/http notices a closed connection only after the body
		close(started)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-testOver:
		}
	}))
	px := startHTTPProxy(t, up)
	// Runs before the proxy stops, which waits for this handler: a test
	// that failed ends instead of hanging until the binary's timeout.
	t.Cleanup(func() { close(testOver) })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", px.URL, strings.NewReader(rpcBody))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	<-errc
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request still running 10s after the client left")
	}
}

// An upstream answer cut short of its Content-Length ends the client's
// connection too: the client must see the answer broken, not wait for
// bytes that will never come or take the next answer for its rest.
func TestFront_ShortBodyClosesConnection(t *testing.T) {
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
		brw.Flush()
	}))
	rc := dialProxy(t, startHTTPProxy(t, up))
	rc.send(rpcBody)
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(rc.br)
	if err != nil {
		t.Fatalf("connection not closed after the cut answer (%v); got:\n%s", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 200 OK\r\n") || !strings.Contains(string(got), "Content-Length: 100\r\n") {
		t.Errorf("answer:\n%s", got)
	}
}

// One client connection keeps one upstream connection across answers of
// every kind: a JSON body read to its Content-Length, a 202 without a
// body, an SSE stream. Redialling after each would cost a handshake per
// request.
func TestHTTPProxy_KeepsItsUpstreamConnection(t *testing.T) {
	up, conns := countingUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"notifications/`):
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(string(body), `"tools/call"`):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	}), 0)
	rc := dialProxy(t, startHTTPProxy(t, up))
	for _, body := range []string{rpcBody, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`, rpcBody} {
		rc.post(body)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("upstream saw %d connections for 4 requests on one client connection, want 1", n)
	}
}
