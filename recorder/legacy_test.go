package recorder_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// absoluteEndpointServer is a go-sdk server on the legacy HTTP+SSE
// transport (2024-11-05) whose endpoint event is an absolute URI on the
// server itself, as a server that knows its public address sends it:
// each GET /sse connects an mcp.SSEServerTransport, and POST
// /message?sid=N goes to the N-th. wrap, if not nil, wraps the handler
// (compression middleware); configure, if given, sees the http.Server
// before it serves.
func absoluteEndpointServer(tb testing.TB, wrap func(http.Handler) http.Handler, configure ...func(*http.Server)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := goSDKServer()
	var mu sync.Mutex
	transports := map[string]*mcp.SSEServerTransport{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		// What go-sdk's SSEHandler sets before connecting.
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		mu.Lock()
		sid := strconv.Itoa(len(transports) + 1)
		t := &mcp.SSEServerTransport{Endpoint: base + "/message?sid=" + sid, Response: w}
		transports[sid] = t
		mu.Unlock()
		ss, err := srv.Connect(r.Context(), t, nil)
		if err != nil {
			return
		}
		stop := context.AfterFunc(r.Context(), func() { ss.Close() })
		defer stop()
		_ = ss.Wait() // the stream stays open as long as the session
	})
	mux.HandleFunc("POST /message", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		t := transports[r.URL.Query().Get("sid")]
		mu.Unlock()
		if t == nil {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		t.ServeHTTP(w, r)
	})
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(mux)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	for _, c := range configure {
		c(hs)
	}
	go hs.Serve(ln)
	tb.Cleanup(func() { hs.Close() })
	return base
}

// A legacy server that names its message endpoint by an absolute URI
// would have go-sdk's client post straight to it, past the proxy, so that
// nothing it sent was recorded, and the TS SDK's client give up ("Endpoint
// origin does not match connection origin"). The proxy rewrites that URI
// to itself: both clients post through it, and the cassette holds both
// sides of each session. The recorded endpoint event is the server's own.
func TestHTTPProxy_LegacyAbsoluteEndpoint(t *testing.T) {
	up := absoluteEndpointServer(t, nil)
	px := startHTTPProxy(t, up+"/sse")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, nil)
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: px.URL + "/sse"}, nil)
	if err != nil {
		t.Fatalf("go-sdk client through the proxy: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via go"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "via go" {
		t.Fatalf("echo: %v %v", res, err)
	}
	_ = cs.Close()
	if out := runTSClient(t, "sse", px.URL+"/sse", "echo", `{"text":"via ts"}`); out.Echo != "via ts" {
		t.Errorf("TS client through the proxy saw %+v", out)
	}
	px.Stop()

	checkRewrittenLegacySessions(t, readCassette(t, px.Cassette), up, []string{"initialize", "tools/call"}, nil)
}

// checkRewrittenLegacySessions checks the cassette of two legacy clients
// that connected through the proxy to a server naming its endpoint by an
// absolute URI: one session per SSE connection, each opening with the
// server's own endpoint event, then the client's messages (among them
// methods wantSent) posted through the proxy to that endpoint. each, if not
// nil, checks every message after the endpoint event further.
func checkRewrittenLegacySessions(t *testing.T, sessions []recorded, up string, wantSent []string, each func(s recorded, m *store.Message)) {
	t.Helper()
	if len(sessions) != 2 {
		t.Fatalf("%d sessions recorded, want one per SSE connection (2):\n%s", len(sessions), strings.Join(flat(sessions), "\n"))
	}
	for _, s := range sessions {
		if s.info.Transport != store.TransportLegacySSE {
			t.Errorf("session %s: transport %q", s.info.ID, s.info.Transport)
		}
		first := s.msgs[0]
		if first.HTTP.EventType != "endpoint" || !strings.HasPrefix(string(first.Frame), up+"/message?sid=") {
			t.Errorf("session %s: first frame %q, want the server's own endpoint event", s.info.ID, first.Frame)
		}
		var sent []string
		for _, m := range s.msgs[1:] {
			if m.Dir == store.C2S {
				sent = append(sent, jsonrpc.Classify(m.Frame).Method)
				if !strings.HasPrefix(m.HTTP.Path, "/message?sid=") {
					t.Errorf("session %s seq %d: posted to %q", s.info.ID, m.Seq, m.HTTP.Path)
				}
			}
			if each != nil {
				each(s, m)
			}
		}
		for _, want := range wantSent {
			if !slices.Contains(sent, want) {
				t.Errorf("session %s: the client's messages recorded: %q; want its %s", s.info.ID, sent, want)
			}
		}
	}
}

// A legacy session lives as long as its SSE connection, whatever happens
// to the connections its POSTs come on: a client's HTTP pool closes idle
// ones (undici after 4 s) and opens new ones for the next call. The
// sessionless initialize POST once made the legacy session its
// connection's, so closing that connection ended the session, and the
// next call's POST started a session of its own.
func TestHTTPProxy_LegacySessionOutlivesItsPOSTConnection(t *testing.T) {
	upstreamClosed := make(chan struct{}, 64)
	up := absoluteEndpointServer(t, nil, func(hs *http.Server) {
		hs.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				select {
				case upstreamClosed <- struct{}{}:
				default:
				}
			}
		}
	})
	px := startHTTPProxy(t, up+"/sse")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, nil).Connect(ctx,
		&mcp.SSEClientTransport{Endpoint: px.URL + "/sse", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(text string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.Content[0].(*mcp.TextContent).Text != text {
			t.Fatalf("echo %q: %v %v", text, res, err)
		}
	}
	call("before")
	hc.CloseIdleConnections() // the POST connection; the SSE stream stays
	// The proxy closes its upstream connection for a client connection
	// that closed, just before it deals with that connection's session.
	select {
	case <-upstreamClosed:
	case <-ctx.Done():
		t.Fatal("the upstream never saw the proxy close the POST connection")
	}
	call("after")
	cs.Close()
	px.Stop()

	sessions := readCassette(t, px.Cassette)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions recorded, want the one SSE connection's:\n%s", len(sessions), strings.Join(flat(sessions), "\n"))
	}
	s := sessions[0]
	if s.info.Transport != store.TransportLegacySSE || s.info.End == nil {
		t.Fatalf("session info %+v, want legacy-sse, ended", s.info)
	}
	for _, m := range s.msgs {
		if m.Time.After(s.info.End.Time) {
			t.Errorf("seq %d %s recorded after the session ended (%v): it ended before its SSE stream did", m.Seq, m.Dir, s.info.End)
			break
		}
	}
}

// A legacy session is its SSE stream, but a client whose stream broke
// may still post to the endpoint it was given (the TypeScript SDK's
// SSEClientTransport does, curl does). Each such POST once found no
// session and started a Streamable HTTP session of its own, of one
// message, which lint then judged as one (http-accept on a legacy POST;
// cancel-unknown for a request the legacy session holds). It belongs to
// the legacy session, whoever answers it: mcpspy's 502 for an upstream
// that died, the upstream for a stream the client closed.
func TestHTTPProxy_LegacyPostAfterItsStream(t *testing.T) {
	tests := []struct {
		name string
		// start starts the upstream; it returns its SSE URL and what
		// breaks the client's stream (given its body).
		start    func(t *testing.T) (string, func(io.Closer))
		wantNote string // in the late POST's note; "" for none
	}{
		{
			name: "upstream killed",
			start: func(t *testing.T) (string, func(io.Closer)) {
				up, server := peertest.StartEverythingHTTP(t, "sse")
				return up + "/sse", func(io.Closer) { server.Stop(t, 10*time.Second) }
			},
			wantNote: "answered by mcpspy, not the upstream",
		},
		{
			name: "stream closed by the client, upstream answers",
			start: func(t *testing.T) (string, func(io.Closer)) {
				return absoluteEndpointServer(t, nil) + "/sse", func(body io.Closer) { body.Close() }
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sseURL, breakStream := tt.start(t)
			px := startHTTPProxy(t, sseURL)
			body, endpoint := legacyConnect(t, px.URL+"/sse")
			defer body.Close()
			breakStream(body)
			waitEnded(t, px.Cassette)

			late := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
			resp, answer := post(t, endpoint, late, nil)
			px.Stop()

			got := readCassette(t, px.Cassette)
			if len(got) != 1 || got[0].info.Transport != store.TransportLegacySSE {
				t.Fatalf("%d sessions recorded, want the legacy one alone:\n%s", len(got), strings.Join(flat(got), "\n"))
			}
			var m *store.Message
			for _, mm := range got[0].msgs {
				if mm.Dir == store.C2S && string(mm.Frame) == late {
					m = mm
				}
			}
			switch {
			case m == nil:
				t.Fatalf("the late POST is not in the legacy session:\n%s", strings.Join(flat(got), "\n"))
			case m.HTTP.Status != resp.StatusCode:
				t.Errorf("late POST recorded with status %d, the client got %d %q", m.HTTP.Status, resp.StatusCode, answer)
			case !strings.Contains(m.Note, tt.wantNote):
				t.Errorf("late POST's note %q, want %q in it", m.Note, tt.wantNote)
			}
		})
	}
}

// legacyConnect opens a legacy SSE stream through the proxy as a client
// by hand would, posts initialize to the endpoint it names and reads the
// answer off the stream. It returns the stream's body, still open, and
// the endpoint's URL.
func legacyConnect(t *testing.T, sseURL string) (io.ReadCloser, string) {
	t.Helper()
	body, _, endpoint := legacyStream(t, sseURL)
	return body, endpoint
}

// legacyStream is legacyConnect that also returns a function reading the
// stream's next message, for a test that waits for answers on it.
func legacyStream(t *testing.T, sseURL string) (io.ReadCloser, func() sse.Event, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sseURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := sse.NewReader(resp.Body, 0)
	next := func() sse.Event {
		t.Helper()
		for {
			ev, err := rd.Next()
			if err != nil {
				t.Fatalf("the stream ended before its next message: %v", err)
			}
			if len(ev.Data) > 0 {
				return ev
			}
		}
	}
	ep := next()
	u, err := resp.Request.URL.Parse(strings.TrimSpace(string(ep.Data)))
	if ep.Type != "endpoint" || err != nil {
		t.Fatalf("first event %q %q, want an endpoint (%v)", ep.Type, ep.Data, err)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}`
	if r, b := post(t, u.String(), initialize, nil); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialize: %d %q, want 202", r.StatusCode, b)
	}
	if ev := next(); jsonrpc.Classify(ev.Data).ID != "1" {
		t.Fatalf("the stream's first message %q, want the initialize result", ev.Data)
	}
	return resp.Body, next, u.String()
}

// waitEnded polls the cassette, with a deadline, until its one session
// has ended.
func waitEnded(t *testing.T, cassette string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := readCassette(t, cassette)
		if len(got) == 1 && got[0].info.End != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session has not ended:\n%s", strings.Join(flat(got), "\n"))
		}
	}
}

// A server whose endpoint is the SSE URL's own path: once that session
// ended, a new GET of the path is a new stream, not late traffic of the
// ended session, and its endpoint is rewritten as any is. (The fuzzer
// found it: a GET took the ended session its path named, and passed the
// next stream's endpoint through unrewritten.)
func TestHTTPProxy_LegacyNewStreamAtAnEndedEndpoint(t *testing.T) {
	var mu sync.Mutex
	streams := 0
	var up string
	up = serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		streams++
		n := streams
		mu.Unlock()
		endpoint := up + "/sse" // the first stream's endpoint: its own path
		if n > 1 {
			endpoint = up + "/message?sid=2"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
	}))
	px := startHTTPProxy(t, up+"/sse")
	get := func() string {
		t.Helper()
		resp, err := http.Get(px.URL + "/sse")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	get()
	waitEnded(t, px.Cassette)
	if got, want := get(), "data: "+px.URL+"/message?sid=2\n"; !strings.Contains(got, want) {
		t.Errorf("the second stream reached the client as %q, want its endpoint rewritten (%q)", got, want)
	}
}

// A client may post a whole message and close its connection at once,
// without waiting for the 202 (a script that fires a notification and
// exits, curl with a short --max-time). server-everything, reached
// directly, still reads the message and acts on it; through
// mcpspy it was dropped, neither passed on nor recorded, because the
// client had gone before (or while) the proxy forwarded it.
func TestHTTPProxy_LegacyPostAndClose(t *testing.T) {
	px := startHTTPProxy(t, peertest.EverythingHTTP(t, "sse")+"/sse")
	body, next, endpoint := legacyStream(t, px.URL+"/sse")
	defer body.Close()
	if r, b := post(t, endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %q, want 202", r.StatusCode, b)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// Each call on a connection of its own, closed once the request is
	// written: whether the proxy sees the client gone before its handler
	// starts or while it forwards is a race, which either way lost calls.
	const calls = 20
	sent := map[string]string{} // id → the call's frame
	for i := range calls {
		id := strconv.Itoa(i + 2)
		call := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"posted and gone ` + id + `"}}}`
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.RequestURI(), u.Host, len(call), call)
		c.Close()
		sent[id] = call
	}
	// The answers come on the stream (next fails the test if the stream
	// ends first; legacyStream's context bounds the wait).
	for answered := map[string]bool{}; len(answered) < calls; {
		ev := next()
		id := jsonrpc.Classify(ev.Data).ID
		if _, ok := sent[id]; ok && strings.Contains(string(ev.Data), "Echo: posted and gone "+id) {
			answered[id] = true
		}
	}
	body.Close()
	px.Stop()
	recorded := map[string]bool{}
	for _, s := range readCassette(t, px.Cassette) {
		for _, m := range s.msgs {
			recorded[string(m.Frame)] = m.Dir == store.C2S
		}
	}
	for id, call := range sent {
		if !recorded[call] {
			t.Errorf("call %s is not recorded", id)
		}
	}
}
