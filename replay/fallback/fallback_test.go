package fallback_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// copyCassette copies a shipped cassette into the test's directory, so
// that the fallback may add to it.
func copyCassette(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(peertest.ModuleRoot(), "cassettes", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// cassetteDB writes a JSONL export as a .db cassette named name in the
// test's directory, for the fallback to add to.
func cassetteDB(t *testing.T, name, export string) string {
	t.Helper()
	tape, err := store.ReadJSONL(strings.NewReader(export), name)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), name)
	if _, err := store.Import(db, tape); err != nil {
		t.Fatal(err)
	}
	return db
}

// client is a go-sdk client that counts the progress notifications it
// gets and offers one root.
type client struct {
	cs       *mcp.ClientSession
	progress chan float64
}

func connect(ctx context.Context, t *testing.T, tr mcp.Transport) *client {
	t.Helper()
	c := &client{progress: make(chan float64, 100)}
	sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.progress <- req.Params.Progress
		},
	})
	// A root, so that server-everything asks the live client for it
	// through the fallback (roots/list, a server→client request).
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/fallback-root", Name: "root"})
	cs, err := sdk.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.cs = cs
	return c
}

// call calls a tool and returns its text.
func (c *client) call(ctx context.Context, t *testing.T, name string, args map[string]any, meta mcp.Meta) string {
	t.Helper()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var parts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " | ")
}

// progressSteps takes n progress notifications, in order.
func (c *client) progressSteps(t *testing.T, n int) []float64 {
	t.Helper()
	var got []float64
	for range n {
		select {
		case p := <-c.progress:
			got = append(got, p)
		case <-time.After(15 * time.Second):
			t.Fatalf("progress: got %v, want %d notifications", got, n)
		}
	}
	return got
}

func newFallback(t *testing.T, opts fallback.Options) *fallback.Source {
	t.Helper()
	fb, err := fallback.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fb.Close() })
	return fb
}

// sessions loads the cassette and returns its sessions.
func sessions(t *testing.T, path string) []store.TapeSession {
	t.Helper()
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tape.Sessions
}

// TestFallback_ServerEverything: the shipped cassette lacks get-sum 5+7
// and a long-running operation of two steps; server-everything (over
// stdio, and over the 2024-11-05 HTTP+SSE transport) answers them
// (progress, and its roots/list question to the live client, passing
// through), the cassette grows by one session, and a second replay
// answers them from it alone.
func TestFallback_ServerEverything(t *testing.T) {
	for _, tc := range []struct {
		name      string
		server    func(t *testing.T) fallback.Options
		transport string
		upstream  string // in the new session's info
	}{
		{"stdio", func(t *testing.T) fallback.Options {
			return fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Stderr: io.Discard}
		}, store.TransportStdio, "server-everything"},
		{"legacy HTTP+SSE", func(t *testing.T) fallback.Options {
			u, err := url.Parse(peertest.EverythingHTTP(t, "sse") + "/sse")
			if err != nil {
				t.Fatal(err)
			}
			return fallback.Options{URL: u}
		}, store.TransportLegacySSE, "/sse"},
		// A URL that does not say which transport: POST /sse/ gets
		// server-everything's 404, so the fallback tries a GET, as the
		// spec tells clients to, and finds the legacy event stream.
		{"legacy HTTP+SSE found by probing", func(t *testing.T) fallback.Options {
			u, err := url.Parse(peertest.EverythingHTTP(t, "sse") + "/sse/")
			if err != nil {
				t.Fatal(err)
			}
			return fallback.Options{URL: u}
		}, store.TransportLegacySSE, "/sse/"},
	} {
		t.Run(tc.name, func(t *testing.T) { testFallbackEverything(t, tc.server(t), tc.transport, tc.upstream) })
	}
}

func testFallbackEverything(t *testing.T, opts fallback.Options, transport, upstream string) {
	db := copyCassette(t, "everything-stdio.db")
	before := len(sessions(t, db))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	opts.Record = db
	fb := newFallback(t, opts)
	srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
	c := connect(ctx, t, srv.Transport())
	scenario := func(c *client) []string {
		return []string{
			c.call(ctx, t, "echo", map[string]any{"message": "hello from mcptape"}, nil), // recorded
			c.call(ctx, t, "get-sum", map[string]any{"a": 5, "b": 7}, nil),               // not recorded
			c.call(ctx, t, "trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 2}, mcp.Meta{"progressToken": "live-token"}),
			fmt.Sprint(c.progressSteps(t, 2)),
			c.call(ctx, t, "get-roots-list", map[string]any{}, nil),
		}
	}
	got := scenario(c)
	want := []string{
		"Echo: hello from mcptape",
		"The sum of 5 and 7 is 12.",
		"Long running operation completed. Duration: 0.2 seconds, Steps: 2.",
		"[1 2]",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("answer %d: got %q, want %q", i, got[i], w)
		}
	}
	if !strings.Contains(got[4], "file:///work/fallback-root") {
		t.Errorf("get-roots-list: got %q, want the live client's root", got[4])
	}
	c.cs.Close()
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	st := fb.Stats()
	if st.Answered != 3 || len(st.Failed) != 0 {
		t.Errorf("stats: %+v, want 3 answered, none failed", st)
	}
	if r := srv.Report(); len(r.Unmatched) != 0 {
		t.Errorf("unmatched: %+v", r.Unmatched)
	}

	all := sessions(t, db)
	if len(all) != before+1 {
		t.Fatalf("cassette has %d sessions, want %d", len(all), before+1)
	}
	added := all[len(all)-1].Info
	if added.Transport != transport || !strings.Contains(added.Upstream, upstream) ||
		added.Handshake.ProtocolVersion != "2025-11-25" || !strings.Contains(string(added.Handshake.ServerInfo), "mcp-servers/everything") ||
		!strings.Contains(string(added.Handshake.ClientInfo), "mcpmock") || added.End == nil {
		t.Errorf("new session's info: %+v", added)
	}

	// server-everything asks a client that declared roots for them on its
	// own, outside any request, a moment after initialized. One
	// initialize is kept: a POST that only found out the transport is not
	// a message of the session.
	var rootsAsked bool
	inits := 0
	for _, m := range all[len(all)-1].Messages {
		rootsAsked = rootsAsked || (m.Dir == store.S2C && strings.Contains(string(m.Frame), `"method":"roots/list"`))
		if m.Dir == store.C2S && strings.Contains(string(m.Frame), `"method":"initialize"`) {
			inits++
		}
	}
	if !rootsAsked || inits != 1 {
		t.Errorf("server-everything asked for roots: %v; initialize recorded %d times, want once", rootsAsked, inits)
	}

	// The second replay: the cassette alone answers all of it.
	srv2 := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db)})
	c2 := connect(ctx, t, srv2.Transport())
	got2 := scenario(c2)
	for i, w := range want {
		if got2[i] != w {
			t.Errorf("replayed answer %d: got %q, want %q", i, got2[i], w)
		}
	}
	if got2[4] != got[4] {
		t.Errorf("replayed get-roots-list: got %q, want %q", got2[4], got[4])
	}
	// The new session's initialize is not unused: the client initialized
	// once, from the first session.
	r := srv2.Report()
	if len(r.Unmatched) != 0 {
		t.Errorf("second replay, unmatched: %+v", r.Unmatched)
	}
	for _, u := range r.Unused {
		if strings.Contains(u, "initialize") || strings.Contains(u, `"a":5`) {
			t.Errorf("second replay, unused: %s", u)
		}
	}
}

// gosdkCassette is a recording of the go-sdk test server with the
// handshake and one echo call, as mcpspy would have recorded it.
const gosdkCassette = `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"host","version":"1.0.0"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"gosdk","version":"1.0.0"}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}}
{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"recorded"}}}}
{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-21T10:00:00.004000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"recorded"}]}}}
`

// TestFallback_GoSDKServer: a go-sdk server over Streamable HTTP, and
// over WebSocket (subprotocol mcp, as mcpspy record proxies it), answers
// what the cassette lacks, progress included; the session it recorded
// (over HTTP with a DELETE at its end, over WebSocket with a normal
// closure) replays.
func TestFallback_GoSDKServer(t *testing.T) {
	t.Run("streamable HTTP", func(t *testing.T) {
		deleted := make(chan struct{}, 1)
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, nil)
		real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				select {
				case deleted <- struct{}{}:
				default:
				}
			}
			h.ServeHTTP(w, r)
		}))
		defer real.Close()
		u, _ := url.Parse(real.URL)
		ended := testFallbackGoSDK(t, u, real.Close, store.TransportHTTP)
		select {
		case <-deleted:
		default:
			t.Error("the fallback did not DELETE its HTTP session")
		}
		if ended.CloseCode != 0 {
			t.Errorf("end %+v", ended)
		}
	})
	t.Run("WebSocket", func(t *testing.T) {
		real := httptest.NewServer(gosdk.WebSocketHandler(gosdk.NewServer("gosdk"), nil))
		defer real.Close()
		u, _ := url.Parse("ws" + strings.TrimPrefix(real.URL, "http") + "/mcp")
		if ended := testFallbackGoSDK(t, u, real.Close, store.TransportWebSocket); ended.CloseCode != 1000 { // a normal closure
			t.Errorf("end %+v, want a normal closure", ended)
		}
	})
}

// testFallbackGoSDK replays gosdkCassette with a fallback to the go-sdk
// server at u, then (after stop) the grown cassette alone. It returns how
// the recorded session ended.
func testFallbackGoSDK(t *testing.T, u *url.URL, stop func(), transport string) store.EndInfo {
	db := cassetteDB(t, "gosdk.db", gosdkCassette)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fb := newFallback(t, fallback.Options{URL: u, Record: db})
	srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
	scenario := func(c *client) []string {
		return []string{
			c.call(ctx, t, "echo", map[string]any{"text": "recorded"}, nil),
			c.call(ctx, t, "add", map[string]any{"a": 20, "b": 22}, nil),
			c.call(ctx, t, "progress", map[string]any{"steps": 3}, mcp.Meta{"progressToken": 7}),
			fmt.Sprint(c.progressSteps(t, 3)),
		}
	}
	want := []string{"recorded", `{"sum":42}`, "done 3 steps", "[1 2 3]"}
	check := func(what string, got []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: got %q, want %q", what, got, want)
		}
	}
	c := connect(ctx, t, srv.Transport())
	check("with the fallback", scenario(c))
	c.cs.Close()
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	if st := fb.Stats(); st.Answered != 2 {
		t.Errorf("stats %+v, want 2 answered", st)
	}
	all := sessions(t, db)
	if len(all) != 2 || all[1].Info.Transport != transport || all[1].Info.Upstream != u.String() ||
		!strings.Contains(string(all[1].Info.Handshake.ServerInfo), "gosdk") || all[1].Info.End == nil {
		t.Fatalf("sessions: %d, the new one %+v", len(all), all[len(all)-1].Info)
	}
	stop() // the second replay must not need it

	srv2 := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db)})
	c2 := connect(ctx, t, srv2.Transport())
	check("replayed", scenario(c2))
	if r := srv2.Report(); len(r.Unmatched) != 0 {
		t.Errorf("second replay, unmatched: %+v", r.Unmatched)
	}
	return *all[1].Info.End
}

// TestFallback_Unreachable: a server that cannot start, one that exits at
// once, and a URL nobody listens on each give the client a JSON-RPC error
// that names the server and what failed, at once; the recorded requests
// are still answered.
func TestFallback_Unreachable(t *testing.T) {
	ln := httptest.NewServer(http.NotFoundHandler())
	deadURL, _ := url.Parse(ln.URL + "/mcp")
	ln.Close() // nobody listens there now
	// The command that exits at once notes each start here: it must be
	// started once, its failure remembered for the session.
	starts := filepath.Join(t.TempDir(), "starts")
	tests := []struct {
		name   string
		opts   fallback.Options
		want   []string
		starts string // a file with a line per start of the server, or ""
		// neverStarted is what Stats.NeverStarted says, or "" for nil.
		neverStarted string
	}{
		{"no such command", fallback.Options{Command: []string{"/nonexistent/mcp-server", "--api-key", "s3cret"}},
			[]string{"/nonexistent/mcp-server --api-key [redacted]", "cannot start it", "no such file or directory"}, "",
			`/nonexistent/mcp-server --api-key [redacted]: cannot start it: exec: "/nonexistent/mcp-server": stat /nonexistent/mcp-server: no such file or directory`},
		{"exits at once", fallback.Options{Command: []string{"sh", "-c", "echo started >> \"$0\"; echo 'no config file' >&2; exit 3", starts}},
			[]string{"exited (exit code 3)", "no config file"}, starts, ""},
		{"unreachable URL", fallback.Options{URL: deadURL},
			[]string{deadURL.String(), "cannot reach it", "connection refused"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			log := &syncbuf.Buffer{}
			tt.opts.Log = log
			tt.opts.Record = filepath.Join(t.TempDir(), "new.db")
			fb := newFallback(t, tt.opts)
			srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, copyCassette(t, "everything-stdio.jsonl")), fb})
			c := connect(ctx, t, srv.Transport())
			for range 2 { // the second time from the remembered failure
				start := time.Now()
				_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 1, "b": 1}})
				if err == nil {
					t.Fatal("get-sum answered; want an error")
				}
				for _, w := range append([]string{"nothing recorded answers tools/call", "fallback server"}, tt.want...) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("the error took %s", d)
				}
			}
			if got := c.call(ctx, t, "echo", map[string]any{"message": "hello from mcptape"}, nil); got != "Echo: hello from mcptape" {
				t.Errorf("recorded echo: %q", got)
			}
			if tt.starts != "" {
				if b, _ := os.ReadFile(tt.starts); strings.Count(string(b), "started") != 1 {
					t.Errorf("the server was started %d times, want once (its failure remembered)", strings.Count(string(b), "started"))
				}
			}
			c.cs.Close()
			srv.Close()
			_ = fb.Close()
			st := fb.Stats()
			if st.Answered != 0 || len(st.Failed) != 2 {
				t.Errorf("stats %+v, want 2 failed", st)
			}
			if got := fmt.Sprint(st.NeverStarted); (st.NeverStarted != nil || tt.neverStarted != "") && got != tt.neverStarted {
				t.Errorf("NeverStarted %s, want %q", got, tt.neverStarted)
			}
			if !strings.Contains(log.String(), "mcpmock: fallback: tools/call") {
				t.Errorf("log: %q", log.String())
			}
			// A server that never said a word leaves no session behind,
			// nor the cassette that was to be created for it.
			if _, err := os.Stat(tt.opts.Record); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stat %s: %v; want no cassette made", tt.opts.Record, err)
			}
		})
	}
}

// TestFallback_ServerEverythingOutlivesStdin records a surprise: when its
// client (here the fallback) leaves while server-everything's roots/list
// is unanswered, server-everything does not exit on its closed stdin (the
// pending request keeps node running); the fallback's SIGTERM, after the
// grace period, stops it. A client that answers first sees it exit 0
// (TestFallback_ServerEverythingStdio).
func TestFallback_ServerEverythingOutlivesStdin(t *testing.T) {
	db := copyCassette(t, "everything-stdio.db")
	fb := newFallback(t, fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Record: db, Stderr: io.Discard, Grace: time.Second})
	srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
	in, out := srv.Pipes()
	answers := make(chan string, 100)
	go func() { // the pipes are synchronous: read while writing
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			answers <- sc.Text()
		}
		close(answers)
	}()
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"h","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}`,
	} {
		if _, err := io.WriteString(in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(30 * time.Second)
	for got := ""; !strings.Contains(got, `"id":2`); { // list_changed may come first
		select {
		case got = <-answers:
			if strings.Contains(got, `"id":2`) && !strings.Contains(got, "The sum of 1 and 2 is 3.") {
				t.Fatalf("get-sum: %s", got)
			}
		case <-deadline:
			t.Fatal("no answer to get-sum within 30 s")
		}
	}
	in.Close() // the host leaves without answering roots/list
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	all := sessions(t, db)
	if end := all[len(all)-1].Info.End; end == nil || end.Signal != "terminated" {
		t.Errorf("server-everything ended %s; want it stopped by SIGTERM", end.Short())
	}
}

// TestFallback_Redact: what the fallback records keeps no credential: not
// Options.Header, not a secret query parameter of the URL, not a member
// Options.Redact names, nor a key Options.RedactValues matches wherever it
// is (a path segment or an innocently named query value of the URL, a
// tool argument); and the redacted session still replays, the redacted
// argument matching another live key.
func TestFallback_Redact(t *testing.T) {
	const (
		pathKey  = "sk-PATHpathPATHpathPATH01"
		queryKey = "sk-QUERYqueryQUERYquery01"
		argKey   = "sk-ARGargARGargARGargARG01"
	)
	db := cassetteDB(t, "gosdk.db", gosdkCassette)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, nil)
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Header.Get("Authorization") != "Bearer header-s3cret" || q.Get("api_key") != "query-s3cret" ||
			q.Get("org") != queryKey || r.URL.Path != "/"+pathKey+"/mcp" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer real.Close()
	u, _ := url.Parse(real.URL + "/" + pathKey + "/mcp?api_key=query-s3cret&org=" + queryKey)
	values, err := recorder.NewValuePatterns([]string{`sk-[A-Za-z0-9]{20,}`})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fb := newFallback(t, fallback.Options{URL: u, Record: db, Header: http.Header{"Authorization": {"Bearer header-s3cret"}},
		Redact: []string{"b"}, RedactValues: values})
	if strings.Contains(fb.Target(), "sk-") {
		t.Errorf("Target() shows a key: %s", fb.Target())
	}
	srv := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
	c := connect(ctx, t, srv.Transport())
	if got := c.call(ctx, t, "add", map[string]any{"a": 20, "b": 22}, nil); got != `{"sum":42}` {
		t.Errorf("add: %q", got)
	}
	if got := c.call(ctx, t, "echo", map[string]any{"text": "key " + argKey}, nil); got != "key "+argKey {
		t.Errorf("echo: %q; the client gets what the server said, key and all", got)
	}
	c.cs.Close()
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"header-s3cret", "query-s3cret", pathKey, queryKey, argKey} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the cassette keeps %q", secret)
		}
	}
	all := sessions(t, db)
	added := all[len(all)-1]
	const path = "/[redacted]/mcp?api_key=[redacted]&org=[redacted]"
	if !strings.HasSuffix(added.Info.Upstream, path) {
		t.Errorf("the new session's upstream is %q, want it to end %s", added.Info.Upstream, path)
	}
	var add, echo string
	for _, m := range added.Messages {
		if m.HTTP == nil || m.HTTP.Path != path {
			t.Errorf("message %d: HTTP metadata %+v, want the path %s", m.Seq, m.HTTP, path)
		}
		switch {
		case strings.Contains(string(m.Frame), `"name":"add"`):
			add = string(m.Frame)
		case strings.Contains(string(m.Frame), `"name":"echo"`):
			echo = string(m.Frame)
		}
	}
	if !strings.Contains(add, `"b":"[redacted]"`) || !strings.Contains(add, `"a":20`) {
		t.Errorf("the recorded add call is %s, want b redacted and a kept", add)
	}
	if !strings.Contains(echo, `"text":"[redacted]"`) {
		t.Errorf("the recorded echo call is %s, want its text redacted", echo)
	}

	// A redacted value matches any live one.
	real.Close()
	srv2 := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db)})
	c2 := connect(ctx, t, srv2.Transport())
	if got := c2.call(ctx, t, "add", map[string]any{"a": 20, "b": 22}, nil); got != `{"sum":42}` {
		t.Errorf("replayed add: %q", got)
	}
	if got := c2.call(ctx, t, "echo", map[string]any{"text": "key sk-ANOTHERanotherANOTHER01"}, nil); got != store.Redacted {
		t.Errorf("replayed echo: %q, want the recorded answer, %s", got, store.Redacted)
	}
}
