package fallback_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// statelessCassette is a 2026-07-28 recording of the go-sdk test server
// as go-sdk v1.8's client and stateless handler exchange it: no
// handshake, server/discover, then one echo call, each request with the
// protocol version in its _meta.
const statelessCassette = `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gosdkserver","version":"1.0.0"}},"ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"logging":{},"tools":{"listChanged":true}}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"recorded"}}}}
{"session":"s1","seq":4,"dir":"s2c","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gosdkserver","version":"1.0.0"}},"content":[{"type":"text","text":"recorded"}],"resultType":"complete"}}}
`

// seenRequest is what reached the real server: the HTTP method, the MCP
// headers, what the body says, and the status the server answered.
type seenRequest struct {
	verb, version, method, name, session string
	bodyMethod, bodyName, metaVersion    string
	status                               int
}

// statusWriter keeps the status a handler writes; it flushes, so that
// event streams still stream through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// serveReplay serves srv over Streamable HTTP on 127.0.0.1, its ConnState
// hook wired, and returns the endpoint and a stop function.
func serveReplay(srv *replay.Server) (endpoint string, stop func()) {
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Config.ConnState = srv.ConnState
	hs.Start()
	return hs.URL + "/mcp", func() { srv.Close(); hs.Close() }
}

// statelessClient is a go-sdk v1.8 client with its default protocol
// version (2026-07-28) over Streamable HTTP, counting progress.
func statelessClient(ctx context.Context, t *testing.T, endpoint string) (*client, func()) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	c := &client{progress: make(chan float64, 100)}
	sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.progress <- req.Params.Progress
		},
	})
	cs, err := sdk.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		cs.Close()
		t.Fatalf("the client speaks %s, want 2026-07-28", v)
	}
	c.cs = cs
	return c, func() { cs.Close(); hc.CloseIdleConnections() }
}

// addSum calls add and returns its structured sum.
func addSum(ctx context.Context, t *testing.T, c *client, a, b int) int {
	t.Helper()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": a, "b": b}})
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	if res.IsError {
		t.Fatalf("add: an error result: %+v", res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Sum *int `json:"sum"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Sum == nil {
		t.Fatalf("add: structuredContent %s, want a sum", raw)
	}
	return *out.Sum
}

// replayWithFallback serves the cassette db over Streamable HTTP with a
// fallback to the real server at realURL that records into db.
func replayWithFallback(t *testing.T, db, realURL string) (srv *replay.Server, fb *fallback.Source, endpoint string, stop func()) {
	t.Helper()
	u, err := url.Parse(realURL)
	if err != nil {
		t.Fatal(err)
	}
	fb = newFallback(t, fallback.Options{URL: u, Record: db})
	srv, err = replay.NewServer([]replay.Source{mocktest.LoadCassette(t, db), fb}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, stop = serveReplay(srv)
	return srv, fb, endpoint, stop
}

// askAll calls echo, add 40+2 and three steps of progress (with token),
// and checks the answers and the progress notifications; which replay it
// is names the errors.
func askAll(ctx context.Context, t *testing.T, c *client, token, which string) {
	t.Helper()
	if got := c.call(ctx, t, "echo", map[string]any{"text": "recorded"}, nil); got != "recorded" {
		t.Errorf("%s: echo %q", which, got)
	}
	if got := addSum(ctx, t, c, 40, 2); got != 42 {
		t.Errorf("%s: add 40+2: sum %d, want 42", which, got)
	}
	if got := c.call(ctx, t, "progress", map[string]any{"steps": 3}, mcp.Meta{"progressToken": token}); got != "done 3 steps" {
		t.Errorf("%s: progress %q", which, got)
	}
	if got := fmt.Sprint(c.progressSteps(t, 3)); got != "[1 2 3]" {
		t.Errorf("%s: progress notifications %s", which, got)
	}
}

// TestFallback_StatelessGoSDK: a 2026-07-28 go-sdk client replays a
// stateless cassette over Streamable HTTP; what the cassette lacks goes,
// without a handshake and with the 2026-07-28 headers, to go-sdk's
// stateless handler, whose answers (progress included) reach the client
// and are recorded, so that a second replay answers them alone.
func TestFallback_StatelessGoSDK(t *testing.T) {
	db := cassetteDB(t, "stateless.db", statelessCassette)

	// The real server: go-sdk's stateless handler, behind a wrapper that
	// notes what reached it.
	var (
		mu   sync.Mutex
		seen []seenRequest
	)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, &mcp.StreamableHTTPOptions{Stateless: true})
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seenRequest{
			verb: r.Method, version: r.Header.Get("MCP-Protocol-Version"), session: r.Header.Get("Mcp-Session-Id"),
			method: r.Header.Get("Mcp-Method"), name: r.Header.Get("Mcp-Name"),
		}
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
					Meta struct {
						Version string `json:"io.modelcontextprotocol/protocolVersion"`
					} `json:"_meta"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &m)
			s.bodyMethod, s.bodyName, s.metaVersion = m.Method, m.Params.Name, m.Params.Meta.Version
		}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		s.status = sw.status
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}))
	defer real.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, fb, endpoint, stop := replayWithFallback(t, db, real.URL)
	defer stop()

	c, closeClient := statelessClient(ctx, t, endpoint)
	defer closeClient()
	askAll(ctx, t, c, "live-token", "first replay (echo the cassette's, add and progress go-sdk's)")
	closeClient()
	stop()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	if st := fb.Stats(); st.Answered != 2 || len(st.Failed) != 0 {
		t.Errorf("stats %+v, want 2 answered, none failed", st)
	}
	if r := srv.Report(); len(r.Unmatched) != 0 {
		t.Errorf("unmatched: %+v", r.Unmatched)
	}

	// What reached go-sdk: the two calls the cassette lacks, as they came
	// (no handshake, no server/discover, not the recorded echo), each a
	// POST with the 2026-07-28 headers mirroring its body and no session.
	// go-sdk's stateless handler refuses a POST whose headers do not agree
	// with its body (400, -32020), so the answered add already proves the
	// headers right; the checks below say which one was wrong if not.
	// Closing the server first waits for its handlers: the wrapper notes a
	// request after go-sdk has answered it, which the client may have
	// read already (CI once saw only the add here).
	real.Close()
	mu.Lock()
	got := append([]seenRequest(nil), seen...)
	mu.Unlock()
	var calls []string
	for _, s := range got {
		calls = append(calls, s.bodyMethod+" "+s.bodyName)
		if s.verb != http.MethodPost || s.status != http.StatusOK || s.session != "" ||
			s.version != "2026-07-28" || s.metaVersion != "2026-07-28" ||
			s.method != s.bodyMethod || s.name != s.bodyName {
			t.Errorf("reached go-sdk: %+v; want a POST answered 200, with MCP-Protocol-Version 2026-07-28 as in _meta, Mcp-Method and Mcp-Name as in the body, no Mcp-Session-Id", s)
		}
	}
	if strings.Join(calls, ", ") != "tools/call add, tools/call progress" {
		t.Errorf("reached go-sdk: %q, want only add and progress", calls)
	}

	// The cassette grew by one session: the add and progress exchanges.
	all := sessions(t, db)
	if len(all) != 2 {
		t.Fatalf("the cassette has %d sessions, want 2", len(all))
	}
	added := all[1]
	if added.Info.Name != "fallback" || added.Info.Transport != store.TransportHTTP || added.Info.Upstream != real.URL || added.Info.End == nil {
		t.Errorf("the new session's info: %+v", added.Info)
	}
	var addCall, addAnswer bool
	for _, m := range added.Messages {
		f := string(m.Frame)
		switch {
		case strings.Contains(f, `"method":"initialize"`), strings.Contains(f, `"method":"notifications/initialized"`):
			t.Errorf("the new session holds a handshake: %s", f)
		case m.Dir == store.C2S && strings.Contains(f, `"name":"add"`) && strings.Contains(f, `"2026-07-28"`):
			addCall = true
		case m.Dir == store.S2C && strings.Contains(f, `"sum":42`):
			addAnswer = true
		}
	}
	if !addCall || !addAnswer {
		t.Errorf("the new session lacks the add exchange (call %v, answer %v)", addCall, addAnswer)
	}
	// real is closed: the second replay must not need it.

	// A second replay, from the grown cassette alone.
	srv2, err := replay.NewServer([]replay.Source{mocktest.LoadCassette(t, db)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	endpoint2, stop2 := serveReplay(srv2)
	defer stop2()
	c2, closeClient2 := statelessClient(ctx, t, endpoint2)
	defer closeClient2()
	askAll(ctx, t, c2, "other-token", "second replay, from the grown cassette alone")
	closeClient2()
	stop2()
	if r := srv2.Report(); len(r.Unmatched) != 0 {
		t.Errorf("second replay, unmatched: %+v", r.Unmatched)
	}
}

// TestFallback_StatelessCancel: a 2026-07-28 request the live client
// cancels is cancelled at the real server the way 2026-07-28 HTTP does it,
// by closing the request's response stream; there is no
// notifications/cancelled to send a stateless server, which holds no
// request to cancel.
//
// go-sdk v1.8's stateless handler cancels a tool whose POST closed only
// with PropagateRequestCancellation; by default the tool runs on, and
// when it waits for its context the handler never returns (and
// httptest.Server.Close waits for it).
func TestFallback_StatelessCancel(t *testing.T) {
	db := cassetteDB(t, "stateless.db", statelessCassette)

	started, cancelled, release := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	var (
		mu      sync.Mutex
		methods []string
	)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := gosdk.NewServer("gosdkserver")
		mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Waits to be cancelled"},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				started <- struct{}{}
				select {
				case <-ctx.Done():
					cancelled <- struct{}{}
				case <-release: // the test failed: let the handler end
				}
				return nil, nil, errors.New("cancelled")
			})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.Header.Get("Mcp-Method"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer real.Close()
	defer close(release) // before real.Close, which waits for the handlers
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, fb, endpoint, stop := replayWithFallback(t, db, real.URL)
	defer stop()
	c, closeClient := statelessClient(ctx, t, endpoint)
	defer closeClient()

	callCtx, cancelCall := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		errc <- err
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("block never reached go-sdk")
	}
	cancelCall()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call: %v, want context.Canceled", err)
	}
	// While the client session, the replay and the fallback all still run.
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool was not cancelled at go-sdk")
	}
	// The session goes on: the next request still reaches go-sdk.
	if got := addSum(ctx, t, c, 40, 2); got != 42 {
		t.Errorf("add after the cancel: sum %d, want 42", got)
	}
	closeClient()
	stop()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	if st := fb.Stats(); st.Answered != 1 || len(st.Failed) != 0 {
		t.Errorf("stats %+v, want 1 answered (add), none failed", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(methods, ", "); got != "POST tools/call, POST tools/call" {
		t.Errorf("reached go-sdk: %s; want the two calls, nothing else (no notifications/cancelled)", got)
	}
}

// TestFallback_RetryWithAStateFromTheRecording: the recording answered
// confirm input_required with a state of another run of the server, and
// recorded the retry with the input "Ada". The live client answers "Bob":
// its retry, echoing the recorded state, matches nothing recorded and
// comes to the fallback, whose server (go-sdk's test server, which
// refuses a state it did not give) would refuse it as it stands. The
// fallback asks the server the call first, and sends the retry with the
// state it gave: the client gets "hello Bob", and the new cassette holds
// both exchanges, so a second replay answers "Bob" alone.
func TestFallback_RetryWithAStateFromTheRecording(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	const old = `"step=1;boot=yesterday"`
	ask := `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gosdkserver","version":"1.0.0"}},"content":null,"requestState":` + old + `,"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}`
	lines := []string{
		`{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/","start":"2026-11-21T10:00:00Z"}}`,
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}}`,
		`{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}}`,
		`{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta + `,"name":"confirm","arguments":{}}}}`,
		`{"session":"s1","seq":4,"dir":"s2c","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"result":` + ask + `}}`,
		`{"session":"s1","seq":5,"dir":"c2s","time":"2026-11-21T10:00:00.004000000Z","message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,"name":"confirm","arguments":{},"requestState":` + old + `,"inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}}}}}`,
		`{"session":"s1","seq":6,"dir":"s2c","time":"2026-11-21T10:00:00.005000000Z","message":{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello Ada"}],"resultType":"complete"}}}`,
	}
	db := cassetteDB(t, "mrtr.db", strings.Join(lines, "\n")+"\n")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, &mcp.StreamableHTTPOptions{Stateless: true})
	real := httptest.NewServer(h)
	defer real.Close()

	confirm := func(name string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, fb, endpoint, stop := replayWithFallback(t, db, real.URL+"/mcp")
		// The fallback's writer commits in the background: only its
		// Close makes what it recorded certain to be in db for the next
		// replay, which otherwise, now and then, found the retry recorded
		// without its answer and waited for that answer.
		defer func() {
			stop()
			if err := fb.Close(); err != nil {
				t.Errorf("fallback: %v", err)
			}
		}()
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			},
		})
		cs, err := sdk.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := confirm("Ada"); got != "hello Ada" {
		t.Errorf("the recorded input: %q", got)
	}
	if got := confirm("Bob"); got != "hello Bob" {
		t.Errorf("other input, through the fallback: %q", got)
	}
	real.Close() // the second replay has only the cassette
	if got := confirm("Bob"); got != "hello Bob" {
		t.Errorf("other input, replayed from what the fallback recorded: %q", got)
	}
}
