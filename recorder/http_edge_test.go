package recorder_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func post(tb testing.TB, url, body string, hdr map[string]string) (*http.Response, string) {
	tb.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// An upstream that is down gets the client a 502 whose JSON-RPC error
// answers the request's id and names the upstream.
func TestHTTPProxy_UpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	px := startHTTPProxy(t, dead)
	initialize := `{"jsonrpc":"2.0","id":"x7","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	resp, body := post(t, px.URL+"/mcp", initialize, nil)
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json: a client parses the error only then", ct)
	}
	s := jsonrpc.Classify([]byte(body))
	if s.Kind != jsonrpc.Error || s.ID != `"x7"` || !strings.Contains(body, dead) {
		t.Errorf("body %s: want a JSON-RPC error for id \"x7\" naming %s", body, dead)
	}
	// The cassette says who answered: the request, with mcpspy's 502 on it.
	px.Stop()
	got := readCassette(t, px.Cassette)
	if len(got) != 1 || len(got[0].msgs) != 1 {
		t.Fatalf("cassette holds %v, want the one request", got)
	}
	m := got[0].msgs[0]
	if string(m.Frame) != initialize || m.HTTP.Status != http.StatusBadGateway || m.HTTP.ResponseHeader.Get("Content-Type") != "application/json" ||
		!strings.Contains(m.Note, "answered by mcpspy") || !strings.Contains(m.Note, dead) {
		t.Errorf("recorded %s with http %+v, note %q: want the 502 and a note naming the upstream", m.Frame, m.HTTP, m.Note)
	}
}

// mcpspy's own 502 to a request that carried no message (the session's
// GET stream, a legacy EventSource's retry of GET /sse, a DELETE) was
// recorded nowhere: no session kept it, the HAR had no entry for it, and
// the session whose DELETE it answered stayed "recording" for ever. Each
// is a bare exchange, as a live upstream's refusal is, with a note that
// mcpspy answered it; the DELETE ends its session all the same, since
// the client has let go of it.
func TestHTTPProxy_BadGatewayWithoutMessage(t *testing.T) {
	up, server := peertest.StartEverythingHTTP(t, "streamableHttp")
	px := startHTTPProxy(t, up+"/mcp")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	resp, body := post(t, px.URL+"/mcp", initialize, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q, session id %q", resp.StatusCode, body, sid)
	}
	server.Stop(t, 10*time.Second)

	requests := []struct {
		name, method, path, sid string
	}{
		{"GET stream", http.MethodGet, "/mcp", sid},
		{"legacy EventSource retry", http.MethodGet, "/sse", ""},
		{"DELETE", http.MethodDelete, "/mcp", sid},
	}
	for _, rq := range requests {
		var hdr []string
		if rq.sid != "" {
			hdr = []string{"Mcp-Session-Id", rq.sid}
		}
		if status, _ := clientDo(t, rq.method, px.URL+rq.path, "", hdr...); status != http.StatusBadGateway {
			t.Fatalf("%s %s: %d, want mcpspy's 502", rq.method, rq.path, status)
		}
	}
	px.Stop()

	got := readCassette(t, px.Cassette)
	_, har := harEntries(t, px.Cassette)
	for _, rq := range requests {
		t.Run(rq.name, func(t *testing.T) {
			var found []string
			for _, s := range got {
				for _, b := range s.info.Bare {
					found = append(found, fmt.Sprintf("%s: %s %s %d", s.info.ID, b.HTTP.Method, b.HTTP.Path, b.HTTP.Status))
					if b.HTTP.Method != rq.method || b.HTTP.Path != rq.path {
						continue
					}
					if b.HTTP.Status != http.StatusBadGateway || b.HTTP.ResponseHeader.Get("Content-Type") != "application/json" ||
						!strings.Contains(b.Note, "answered by mcpspy, not the upstream") || s.info.HTTPSessionID != rq.sid {
						t.Errorf("session %s (id %q) keeps %+v, note %q; want mcpspy's 502 and a note saying so, in session %q",
							s.info.ID, s.info.HTTPSessionID, b.HTTP, b.Note, rq.sid)
					}
					if rq.method == http.MethodDelete && (s.info.End == nil || s.info.End.Reason != store.EndClosed) {
						t.Errorf("session %s ended %+v, want closed by its DELETE", s.info.ID, s.info.End)
					}
					if !slices.ContainsFunc(har, func(l string) bool { return strings.HasPrefix(l, rq.method+" "+rq.path+" 502 ") }) {
						t.Errorf("no HAR entry for it: %q", har)
					}
					return
				}
			}
			t.Errorf("no session keeps %s %s; bare exchanges: %q", rq.method, rq.path, found)
		})
	}
}

// A refusal with no body (a server that forgot the session) is kept on
// the request refused: its status and the answer's headers.
func TestHTTPProxy_BareRefusal(t *testing.T) {
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Why", "forgotten")
		w.WriteHeader(http.StatusNotFound)
	}))
	px := startHTTPProxy(t, up+"/mcp")
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`
	resp, body := post(t, px.URL+"/mcp", call, map[string]string{"Mcp-Session-Id": "gone"})
	if resp.StatusCode != http.StatusNotFound || body != "" {
		t.Fatalf("the client got %d %q, want the bare 404", resp.StatusCode, body)
	}
	px.Stop()
	got := readCassette(t, px.Cassette)
	if len(got) != 1 || len(got[0].msgs) != 1 {
		t.Fatalf("cassette holds %v, want the one request", got)
	}
	m := got[0].msgs[0]
	if string(m.Frame) != call || m.HTTP.Status != http.StatusNotFound || m.HTTP.ResponseHeader.Get("X-Why") != "forgotten" || m.Note != "" {
		t.Errorf("recorded %s with http %+v, note %q: want the 404 and its headers", m.Frame, m.HTTP, m.Note)
	}
	if status, gone := m.HTTP.Refusal(); status != http.StatusNotFound || !gone {
		t.Errorf("Refusal() = %d, %v; want 404 for a session gone", status, gone)
	}
}

// A refusal with a body that answers nothing (go-sdk's text "session not
// found", the TypeScript SDK's JSON-RPC error with a null id) is kept
// twice: the body as the server frame it is, and the refusal on the
// request, with a note of how the body began. An error that answers the
// request by its id is an answer, not a refusal: the request keeps no
// status.
func TestHTTPProxy_RefusalWithBody(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		status                  int
		wantNote                string // "": the request is not marked refused
	}{
		{"text", "text/plain; charset=utf-8", "session not found\n", 404, "refused without a message: session not found"},
		{"null id", "application/json", `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, 404,
			`refused without a message: {"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`},
		{"an error answering the call", "application/json", `{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"header mismatch"}}`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			px := startHTTPProxy(t, up+"/mcp")
			call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`
			resp, body := post(t, px.URL+"/mcp", call, map[string]string{"Mcp-Session-Id": "gone"})
			if resp.StatusCode != tt.status || body != tt.body {
				t.Fatalf("the client got %d %q, want %d %q as the server sent it", resp.StatusCode, body, tt.status, tt.body)
			}
			px.Stop()
			got := readCassette(t, px.Cassette)
			if len(got) != 1 || len(got[0].msgs) != 2 {
				t.Fatalf("cassette holds %v, want the request and the body", got)
			}
			req, answer := got[0].msgs[0], got[0].msgs[1]
			if string(answer.Frame) != tt.body || answer.Dir != store.S2C || answer.HTTP.Status != tt.status {
				t.Errorf("the body recorded as %s %q, http %+v", answer.Dir, answer.Frame, answer.HTTP)
			}
			status, _ := req.HTTP.Refusal()
			switch {
			case tt.wantNote == "" && (status != 0 || req.Note != ""):
				t.Errorf("request marked refused: http %+v, note %q", req.HTTP, req.Note)
			case tt.wantNote != "" && (status != tt.status || req.Note != tt.wantNote || req.HTTP.ResponseHeader.Get("Content-Type") != tt.contentType):
				t.Errorf("request recorded with http %+v, note %q; want %d, its headers and note %q", req.HTTP, req.Note, tt.status, tt.wantNote)
			}
		})
	}
}

// Malformed bodies and broken SSE pass through untouched and are recorded
// (the store marks them malformed); credentials are redacted in the
// cassette but reach the server as sent.
func TestHTTPProxy_MalformedAndRedaction(t *testing.T) {
	var mu sync.Mutex
	var seenAuth, seenQuery string
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch string(b) {
		case "{broken":
			mu.Lock()
			seenAuth, seenQuery = r.Header.Get("Authorization"), r.URL.RawQuery
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("not json at all"))
		case `{"jsonrpc":"2.0","id":1,"method":"sse"}`:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {trunc"))
		}
	}))
	px := startHTTPProxy(t, up+"/mcp", func(p *recorder.HTTPProxy) { p.Redact = recorder.NewHTTPRedactor([]string{"X-Tenant"}) })
	hdr := map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k", "X-Tenant": "acme", "X-Plain": "visible"}
	if _, body := post(t, px.URL+"/mcp?access_token=abc&page=2", "{broken", hdr); body != "not json at all" {
		t.Errorf("malformed answer came through as %q", body)
	}
	if _, body := post(t, px.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"sse"}`, nil); body != "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {trunc" {
		t.Errorf("broken SSE came through as %q", body)
	}
	mu.Lock()
	if seenAuth != "Bearer s3cret" || seenQuery != "access_token=abc&page=2" {
		t.Errorf("server saw Authorization %q query %q: forwarding must not redact", seenAuth, seenQuery)
	}
	mu.Unlock()
	px.Stop()
	got := readCassette(t, px.Cassette)
	var frames []string
	for _, s := range got {
		for _, m := range s.msgs {
			frames = append(frames, fmt.Sprintf("%s %s %s", m.Dir, jsonrpc.Classify(m.Frame).Kind, m.Frame))
			h := m.HTTP
			if h.RequestHeader.Get("X-Plain") == "visible" {
				for _, k := range []string{"Authorization", "X-Api-Key", "X-Tenant"} {
					if v := h.RequestHeader.Get(k); v != recorder.Redacted {
						t.Errorf("stored %s = %q, want redacted", k, v)
					}
				}
				if h.Path != "/mcp?access_token=[redacted]&page=2" {
					t.Errorf("stored path %q", h.Path)
				}
			}
		}
	}
	want := []string{
		"c2s malformed {broken",
		"s2c malformed not json at all",
		`c2s request {"jsonrpc":"2.0","id":1,"method":"sse"}`,
		`s2c response {"jsonrpc":"2.0","id":1,"result":{}}`,
		"s2c malformed {trunc",
	}
	if strings.Join(frames, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(frames, "\n"), strings.Join(want, "\n"))
	}
}

// A client that disconnects cancels its upstream request.
func TestHTTPProxy_ClientDisconnectCancelsUpstream(t *testing.T) {
	started, cancelled, testOver := make(chan struct{}), make(chan struct{}), make(chan struct{})
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
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
	req, _ := http.NewRequestWithContext(ctx, "POST", px.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"slow"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request still running 10s after the client left")
	}
	// The cassette tells that the stream began and the client left.
	px.Stop()
	got := readCassette(t, px.Cassette)
	if len(got) != 1 || len(got[0].msgs) != 1 {
		t.Fatalf("cassette holds %v, want the one request", got)
	}
	if m := got[0].msgs[0]; m.HTTP.Status != http.StatusOK || m.HTTP.ResponseHeader.Get("Content-Type") != "text/event-stream" ||
		m.Note != "the client went away before its event stream carried a message" {
		t.Errorf("recorded http %+v, note %q", m.HTTP, m.Note)
	}
}

// 50 go-sdk clients at once, each with its own session and its own
// marker text: every recorded frame that carries a marker sits in the
// session of the client that sent it.
func TestHTTPProxy_ConcurrentSessions(t *testing.T) {
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	px := startHTTPProxy(t, up+"/mcp")
	const n = 50
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// One shared HTTP client, as a host would have: pooled connections
	// carry requests of different sessions.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	sids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("c%d", i), Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: i%2 == 0}, nil)
			if err != nil {
				errs <- err
				return
			}
			sids[i] = cs.ID()
			for k := range 3 {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprintf("marker-%d-%d", i, k)}}); err != nil {
					errs <- err
					return
				}
			}
			cs.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	px.Stop()
	got := readCassette(t, px.Cassette)
	bySID := map[string]recorded{}
	for _, s := range got {
		if s.info.HTTPSessionID != "" {
			bySID[s.info.HTTPSessionID] = s
		}
	}
	for i, sid := range sids {
		s, ok := bySID[sid]
		if !ok {
			t.Errorf("client %d: no session for %s", i, sid)
			continue
		}
		if !strings.Contains(string(s.info.Handshake.ClientInfo), fmt.Sprintf(`"c%d"`, i)) {
			t.Errorf("client %d's session has clientInfo %s", i, s.info.Handshake.ClientInfo)
		}
		markers := 0
		for _, m := range s.msgs {
			f := string(m.Frame)
			if j := strings.Index(f, "marker-"); j >= 0 {
				markers++
				if !strings.HasPrefix(f[j:], fmt.Sprintf("marker-%d-", i)) {
					t.Errorf("session of client %d holds %s", i, f)
				}
			}
		}
		if markers != 6 { // 3 calls and 3 answers
			t.Errorf("client %d: %d marker frames, want 6", i, markers)
		}
		if s.info.End == nil || s.info.End.Reason != store.EndClosed {
			t.Errorf("client %d: end %+v", i, s.info.End)
		}
	}
}

// An https upstream with a certificate the proxy does not trust: refused
// (502) by default, proxied with the explicit insecure transport.
func TestHTTPProxy_HTTPSUpstream(t *testing.T) {
	srv := goSDKServer()
	ts := httptest.NewTLSServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	tests := []struct {
		name     string
		insecure bool
	}{{"certificate checked", false}, {"--insecure", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px := startHTTPProxy(t, ts.URL+"/mcp", func(p *recorder.HTTPProxy) { p.Transport = recorder.NewUpstreamTransport(tt.insecure) })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "tls", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", MaxRetries: -1}, nil)
			if !tt.insecure {
				if err == nil {
					cs.Close()
					t.Fatal("connected through an untrusted certificate without --insecure")
				}
				return
			}
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "tls"}}); err != nil {
				t.Fatal(err)
			}
			cs.Close()
		})
	}
}

// A request body larger than the 64 MiB the cassette keeps of it reaches
// the upstream whole; the recorded frame is its first 64 MiB.
func TestHTTPProxy_OversizedRequestBody(t *testing.T) {
	const size = 64<<20 + 10
	var got int64
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	px := startHTTPProxy(t, up+"/mcp")
	for _, chunked := range []bool{false, true} {
		var body io.Reader = io.LimitReader(zeros{}, size)
		if !chunked {
			body = strings.NewReader(strings.Repeat(" ", size))
		}
		resp, err := http.Post(px.URL+"/mcp", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got != size {
			t.Errorf("chunked=%v: upstream got %d bytes, want %d", chunked, got, size)
		}
	}
}

// An answer larger than the 64 MiB the cassette keeps of it reaches the
// client whole, with a Content-Length or chunked; the recorded frame is
// its first 64 MiB.
func TestHTTPProxy_OversizedResponseBody(t *testing.T) {
	const size = 64<<20 + 10
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("length") == "yes" {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		io.Copy(w, io.LimitReader(zeros{}, size))
	}))
	px := startHTTPProxy(t, up+"/mcp")
	for _, length := range []string{"yes", "no"} {
		resp, err := http.Post(px.URL+"/mcp?length="+length, "application/json", strings.NewReader(rpcBody))
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != size || err != nil {
			t.Errorf("Content-Length %s: client got %d bytes (%v), want %d", length, n, err, size)
		}
	}
	px.Stop()
	var recorded []int
	for _, s := range readCassette(t, px.Cassette) {
		for _, m := range s.msgs {
			if m.Dir == store.S2C {
				recorded = append(recorded, len(m.Frame))
			}
		}
	}
	if want := []int{64 << 20, 64 << 20}; !slices.Equal(recorded, want) {
		t.Errorf("recorded answers of %v bytes, want %v", recorded, want)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// An answer a real net/http upstream breaks off (the handler aborts after
// the first bytes) must reach a net/http client broken off through the
// proxy, as it does directly, never as a whole answer: for an SSE stream
// and for a chunked JSON body. What came before the break passes.
func TestHTTPProxy_CutAnswerStaysCut(t *testing.T) {
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		} else {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"res`)
		}
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // net/http closes the connection mid-answer
	}))
	px := startHTTPProxy(t, up)
	for _, path := range []string{"/sse", "/json"} {
		t.Run(path, func(t *testing.T) {
			var bodies [2]string
			for i, base := range []string{up, px.URL} {
				resp, err := http.Post(base+path, "application/json", strings.NewReader(rpcBody))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Fatalf("via %s: the cut answer read as whole: %q", base, got)
				}
				bodies[i] = string(got)
			}
			if bodies[1] != bodies[0] {
				t.Fatalf("through the proxy the client got %q before the break, directly %q", bodies[1], bodies[0])
			}
		})
	}
}
