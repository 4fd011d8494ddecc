package vcr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// connect connects a go-sdk client through srv; end closes the session.
func connect(tb testing.TB, srv *vcr.Server) (ctx context.Context, cs *mcp.ClientSession, end func()) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		cancel()
		tb.Fatalf("connect: %v", err)
	}
	return ctx, cs, func() { cs.Close(); cancel() }
}

// callEcho connects a go-sdk client through srv and calls tool with
// {argName: text}, returning the first text content.
func callEcho(tb testing.TB, srv *vcr.Server, tool, argName, text string) string {
	tb.Helper()
	ctx, cs, end := connect(tb, srv)
	defer end()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{argName: text}})
	if err != nil {
		tb.Fatalf("call %s: %v", tool, err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// The reference server recorded on the first run, replayed on the second
// without it (its command no longer even exists), recorded again on
// demand.
func TestNew_RecordOnceThenReplay(t *testing.T) {
	t.Setenv(vcr.EnvMode, "") // whatever the run was started with
	path := filepath.Join(t.TempDir(), "testdata", "everything.db")
	everything := peertest.ServerEverything(t, "stdio")

	t.Run("the first run records", func(t *testing.T) {
		srv := vcr.New(t, path, everything)
		if !srv.Recording() || srv.Mock() != nil {
			t.Fatalf("no cassette yet, but the server is not recording")
		}
		if got := callEcho(t, srv, "echo", "message", "hello vcr"); got != "Echo: hello vcr" {
			t.Errorf("echo answered %q", got)
		}
		checkCalls(t, srv)
	})
	tape, err := store.Load(path)
	if err != nil {
		t.Fatalf("the passing test saved no cassette: %v", err)
	}
	if n := len(tape.Sessions); n != 1 {
		t.Fatalf("%d sessions recorded, want 1", n)
	}
	info := tape.Sessions[0].Info
	if !strings.Contains(string(info.Handshake.ServerInfo), "everything") || info.End == nil {
		t.Errorf("session info %+v: want server-everything's handshake and an end", info)
	}

	t.Run("the next run replays without the server", func(t *testing.T) {
		srv := vcr.New(t, path, []string{filepath.Join(t.TempDir(), "no-such-server")})
		if srv.Recording() {
			t.Fatalf("the cassette exists, but the server is recording")
		}
		if got := callEcho(t, srv, "echo", "message", "hello vcr"); got != "Echo: hello vcr" {
			t.Errorf("echo replayed %q", got)
		}
		checkCalls(t, srv)
		srv.Mock().AssertAllUsed()
	})

	t.Run("a replay ignoring a member", func(t *testing.T) {
		srv := vcr.New(t, path, everything, vcr.WithIgnore("message"))
		if got := callEcho(t, srv, "echo", "message", "different today"); got != "Echo: hello vcr" {
			t.Errorf("echo replayed %q, want the recorded answer", got)
		}
	})

	t.Run("record mode records again", func(t *testing.T) {
		srv := vcr.New(t, path, everything, vcr.WithMode(vcr.Record))
		if got := callEcho(t, srv, "echo", "message", "once more"); got != "Echo: once more" {
			t.Errorf("echo answered %q", got)
		}
	})
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "once more") || strings.Contains(string(b), "hello vcr") {
		t.Errorf("after recording again the cassette should hold the new call only (err %v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*recording*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// checkCalls holds Received and ToolCalls to what callEcho sent, whether
// the server records or replays: a test's checks read the same both ways.
func checkCalls(t *testing.T, srv *vcr.Server) {
	t.Helper()
	calls := srv.ToolCalls("echo")
	if len(calls) != 1 || string(calls[0]) != `{"message":"hello vcr"}` {
		t.Errorf("recording %v: ToolCalls(echo) = %s", srv.Recording(), calls)
	}
	var methods []string
	for _, r := range srv.Received() {
		if r.Session != 1 {
			t.Errorf("recording %v: %s in session %d, want 1", srv.Recording(), r.Method, r.Session)
		}
		methods = append(methods, r.Method)
	}
	if !slices.Contains(methods, "initialize") || !slices.Contains(methods, "tools/call") {
		t.Errorf("recording %v: received %q", srv.Recording(), methods)
	}
}

// fakeTB stands in for a test whose failures and end the test below
// controls: Fatalf ends the goroutine, as testing's does.
type fakeTB struct {
	testing.TB // the real test, for what is not overridden here
	mu         sync.Mutex
	failed     bool
	logs       []string
	cleanups   []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Name() string      { return "TestFake" }
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, a...))
}
func (f *fakeTB) Errorf(format string, a ...any) {
	f.Logf(format, a...)
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
}
func (f *fakeTB) Fatalf(format string, a ...any) { f.Errorf(format, a...); runtime.Goexit() }
func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *fakeTB) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.logs, "\n")
}

// runFake runs body as a test of its own, then its cleanups.
func runFake(t *testing.T, body func(tb *fakeTB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	return f
}

func TestNew_Failures(t *testing.T) {
	goServer := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}
	tests := []struct {
		name    string
		env     string
		command []string
		body    func(tb *fakeTB, srv *vcr.Server)
		opts    []vcr.Option
		wantLog []string
	}{
		{name: "a failing test saves nothing", command: goServer,
			body: func(tb *fakeTB, srv *vcr.Server) {
				if got := callEcho(tb, srv, "echo", "text", "hi"); got != "hi" {
					tb.Errorf("echo answered %q", got)
				}
				tb.Errorf("the host under test got it wrong")
			},
			wantLog: []string{"the host under test got it wrong", "the test failed, so", "was not written; the server's stderr (or the proxy's warnings): (it wrote nothing)"}},
		{name: "replay only, no cassette", command: goServer, opts: []vcr.Option{vcr.WithMode(vcr.ReplayOnly)},
			wantLog: []string{"does not exist, and this run only replays; record it with MCPTAPE_VCR=once"}},
		{name: "the environment says replay only", env: "replay", command: goServer,
			wantLog: []string{"only replays"}},
		{name: "a bad environment value", env: "bogus", command: goServer,
			wantLog: []string{`MCPTAPE_VCR="bogus": want once, replay, record or new`}},
		{name: "no cassette and no command",
			wantLog: []string{"does not exist and there is no server command to record it from"}},
		{name: "a value pattern that does not compile", command: goServer, opts: []vcr.Option{vcr.WithRedactValue(`sk-[A-Z]+`, `sk-(`)},
			wantLog: []string{`vcr: WithRedactValue "sk-(": error parsing regexp`}},
		{name: "an empty value pattern", command: goServer, opts: []vcr.Option{vcr.WithRedactValue("")},
			wantLog: []string{`vcr: WithRedactValue "": an empty pattern matches every value`}},
		{name: "an empty name to redact", command: goServer, opts: []vcr.Option{vcr.WithRedact("token", "")},
			wantLog: []string{`vcr: WithRedact "": an empty name hides nothing`}},
		{name: "a server that cannot start", command: []string{"/no/such/mcp-server"},
			body: func(tb *fakeTB, srv *vcr.Server) {
				in, out := srv.Pipes()
				in.Close()
				out.Close()
			},
			wantLog: []string{`server command "/no/such/mcp-server"`, "was not written"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(vcr.EnvMode, tt.env)
			dir := t.TempDir()
			path := filepath.Join(dir, "c.db")
			f := runFake(t, func(tb *fakeTB) {
				srv := vcr.New(tb, path, tt.command, tt.opts...)
				if tt.body != nil {
					tt.body(tb, srv)
				}
			})
			if !f.Failed() {
				t.Errorf("the test did not fail")
			}
			for _, w := range tt.wantLog {
				if !strings.Contains(f.log(), w) {
					t.Errorf("log lacks %q:\n%s", w, f.log())
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("files left in the cassette's directory: %v", entries)
			}
		})
	}
}

// A go-sdk server over Streamable HTTP, reached with a bearer token and a
// key in its path: recorded once through the proxy with the token, the key
// and the member WithRedact names redacted, then replayed with the server
// gone.
func TestNewHTTP_RecordOnceThenReplay(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "remote.db")
	remote := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text     string `json:"text"`
		Customer string `json:"customer"`
	}
	mcp.AddTool(remote, &mcp.Tool{Name: "echo", Description: "Echoes its text for a customer"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remote }, nil))
	call := func(t *testing.T, srv *vcr.Server, customer string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: &http.Client{Transport: peertest.HeaderTransport{Name: "Authorization", Value: "Bearer s3cret-token"}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		// The echo tool ignores "customer": a value the host sends that the
		// cassette must not keep, and replay must accept whatever it is.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http", "customer": customer}})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}

	const pathKey = "sk-PATHpathPATHpathPATH01"
	t.Run("recorded", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/"+pathKey+"/mcp", vcr.WithRedact("customer"), vcr.WithRedactValue(`sk-[A-Za-z0-9]{20,}`))
		if !srv.Recording() || !strings.HasSuffix(srv.URL(), "/mcp") || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
			t.Fatalf("recording %v at %s: want a proxy on 127.0.0.1 ending in /mcp", srv.Recording(), srv.URL())
		}
		if got := call(t, srv, "ACME-12345"); got != "over http" {
			t.Errorf("echo answered %q", got)
		}
	})
	upstream.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no cassette: %v", err)
	}
	tape, err := store.Load(path)
	if err != nil || len(tape.Sessions) == 0 || tape.Sessions[0].Info.Transport != store.TransportHTTP {
		t.Fatalf("cassette: %v, %+v", err, tape)
	}
	var all strings.Builder // go-sdk's server/discover probe is a session of its own
	for _, sess := range tape.Sessions {
		for _, m := range sess.Messages {
			all.Write(m.Frame)
			if m.HTTP != nil {
				fmt.Fprint(&all, m.HTTP.RequestHeader, m.HTTP.Path)
			}
		}
	}
	if up := tape.Sessions[0].Info.Upstream; !strings.HasSuffix(up, "/[redacted]/mcp") {
		t.Errorf("upstream %q, want the key in its path redacted", up)
	}
	for _, secret := range []string{"s3cret-token", "ACME-12345", pathKey} {
		if strings.Contains(string(b), secret) || strings.Contains(all.String(), secret) {
			t.Errorf("the cassette keeps %q", secret)
		}
	}
	if !strings.Contains(all.String(), `"customer":"[redacted]"`) || !strings.Contains(all.String(), "over http") {
		t.Errorf("the cassette should hold the call with the customer redacted:\n%s", all.String())
	}

	t.Run("replayed without the server", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp")
		if srv.Recording() {
			t.Fatal("recording, though the cassette exists")
		}
		if a, b := srv.URL(), srv.URL(); a != b {
			t.Errorf("URL gave %s, then %s: one replay endpoint per server", a, b)
		}
		if got := call(t, srv, "another customer"); got != "over http" {
			t.Errorf("echo replayed %q", got)
		}
		// Transport() is Streamable HTTP too, for a client without headers.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
		if err != nil {
			t.Fatalf("connect with Transport(): %v", err)
		}
		cs.Close()
	})
}

// WithRedactValue keeps a key out of the cassette wherever a recording
// holds it (a tool argument, the answer echoing it, an argument of the
// server command, _meta of a new episode), while the host gets its echo
// whole and Received reads what the host sent, in both modes; the replay
// answers the call made with another key.
func TestNew_RedactValue(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	const (
		argKey = "sk-ARGargARGargARGargARG01"
		cmdKey = "sk-CMDcmdCMDcmdCMDcmdCMD01"
		newKey = "sk-NEWnewNEWnewNEWnewNEW01"
	)
	path := filepath.Join(t.TempDir(), "c.db")
	bin := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	server := []string{bin, cmdKey}
	redact := vcr.WithRedactValue(`sk-[A-Za-z0-9]{20,}`)

	t.Run("recorded", func(t *testing.T) {
		srv := vcr.New(t, path, server, redact)
		if got := callEcho(t, srv, "echo", "text", "key "+argKey); got != "key "+argKey {
			t.Errorf("echo answered %q, want the server's answer whole", got)
		}
		if calls := srv.ToolCalls("echo"); len(calls) != 1 || string(calls[0]) != `{"text":"key `+argKey+`"}` {
			t.Errorf("ToolCalls(echo) = %s, want the text the host sent", calls)
		}
	})
	raw := readFile(t, path)
	for _, key := range []string{argKey, cmdKey} {
		if bytes.Contains(raw, []byte(key)) {
			t.Errorf("the cassette file holds %s", key)
		}
	}
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tape.Sessions[0].Info.Upstream, bin+" [redacted]"; got != want {
		t.Errorf("upstream %q, want %q", got, want)
	}

	t.Run("replayed with another key", func(t *testing.T) {
		srv := vcr.New(t, path, server, redact, vcr.WithMode(vcr.ReplayOnly))
		if got := callEcho(t, srv, "echo", "text", "key sk-ANOTHERanotherANOTHER01"); got != store.Redacted {
			t.Errorf("echo replayed %q, want the recorded answer, %s", got, store.Redacted)
		}
		if calls := srv.ToolCalls("echo"); len(calls) != 1 || string(calls[0]) != `{"text":"key sk-ANOTHERanotherANOTHER01"}` {
			t.Errorf("ToolCalls(echo) = %s, want the text the host sent, as while recording", calls)
		}
	})

	t.Run("a new episode", func(t *testing.T) {
		srv := vcr.New(t, path, server, redact, vcr.WithMode(vcr.ReplayWithNew))
		h := connectHost(t, srv, nil)
		res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}, Meta: mcp.Meta{"org": newKey}})
		if err != nil || res.StructuredContent == nil {
			t.Fatalf("add: %+v, %v", res, err)
		}
		if n := srv.NewRequests(); n != 1 {
			t.Errorf("%d new requests, want the add", n)
		}
	})
	if raw := readFile(t, path); bytes.Contains(raw, []byte(newKey)) || bytes.Contains(raw, []byte(cmdKey)) {
		t.Error("the new episode brought a key into the cassette file")
	}
	if tape, err = store.Load(path); err != nil || len(tape.Sessions) != 2 {
		t.Fatalf("cassette: %v, want two sessions", err)
	}
	added := tape.Sessions[1]
	var call string
	for _, m := range added.Messages {
		if m.Dir == store.C2S && strings.Contains(string(m.Frame), `"name":"add"`) {
			call = string(m.Frame)
		}
	}
	if !strings.Contains(call, `"org":"[redacted]"`) || added.Info.Upstream != bin+" [redacted]" {
		t.Errorf("the new session (upstream %q) should hold the add with its _meta key redacted: %s", added.Info.Upstream, call)
	}
}

// WithRedact's names hide a value on the server command too, as the
// credential names do: the stored command line keeps the flag's name
// (tenant=) and a URL argument's parameter, without their values, in the
// recorded session and in one a new episode records.
func TestNew_RedactCommandLine(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "c.db")
	bin := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	server := []string{bin, "tenant=acme", "https://h.example/mcp?tenant=acme&page=2"}
	redact := vcr.WithRedact("tenant")
	want := bin + " tenant=[redacted] https://h.example/mcp?tenant=[redacted]&page=2"

	t.Run("recorded", func(t *testing.T) {
		srv := vcr.New(t, path, server, redact)
		if got := callEcho(t, srv, "echo", "text", "hi"); got != "hi" {
			t.Errorf("echo answered %q", got)
		}
	})
	t.Run("a new episode", func(t *testing.T) {
		srv := vcr.New(t, path, server, redact, vcr.WithMode(vcr.ReplayWithNew))
		if got := callEcho(t, srv, "echo", "text", "another"); got != "another" {
			t.Errorf("echo answered %q", got)
		}
	})
	if bytes.Contains(readFile(t, path), []byte("acme")) {
		t.Error("the cassette file holds the tenant")
	}
	tape, err := store.Load(path)
	if err != nil || len(tape.Sessions) != 2 {
		t.Fatalf("cassette: %v, want two sessions", err)
	}
	for _, s := range tape.Sessions {
		if s.Info.Upstream != want {
			t.Errorf("%s: upstream %q, want %q", s.Info.ID, s.Info.Upstream, want)
		}
	}
}

// The wrong way in for each kind fails the test with a line saying so.
func TestNew_WrongAccessor(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	upstream := httptest.NewServer(http.NotFoundHandler())
	defer upstream.Close()
	for _, tt := range []struct {
		name string
		body func(tb *fakeTB, path string)
		want string
	}{
		{"pipes of an HTTP recording", func(tb *fakeTB, path string) { vcr.NewHTTP(tb, path, upstream.URL+"/mcp").Pipes() }, "connect to URL(), not Pipes()"},
		{"a bad upstream", func(tb *fakeTB, path string) { vcr.NewHTTP(tb, path, "ftp://example.com/mcp") }, `upstream "ftp://example.com/mcp": want an http:// or https:// URL`},
		{"a bad upstream from a func", func(tb *fakeTB, path string) {
			vcr.NewHTTPFunc(tb, path, func(testing.TB) string { return "example.com:80" })
		}, `vcr: NewHTTPFunc: upstream "example.com:80": want an http:// or https:// URL`},
		{"no upstream func", func(tb *fakeTB, path string) { vcr.NewHTTPFunc(tb, path, nil) }, "NewHTTPFunc: the upstream func is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := runFake(t, func(tb *fakeTB) { tt.body(tb, filepath.Join(dir, "c.db")) })
			if !f.Failed() || !strings.Contains(f.log(), tt.want) {
				t.Errorf("failed %v, log:\n%s\nwant %q", f.Failed(), f.log(), tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("files left: %v", entries)
			}
		})
	}
}

// MCPTAPE_VCR=record records again though the cassette exists, whatever
// the test's own mode; the go-sdk server stands in for a real one.
func TestNew_EnvRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	server := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}
	t.Setenv(vcr.EnvMode, "")
	t.Run("first", func(t *testing.T) {
		if got := callEcho(t, vcr.New(t, path, server), "echo", "text", "one"); got != "one" {
			t.Errorf("echo %q", got)
		}
	})
	t.Setenv(vcr.EnvMode, "record")
	t.Run("again", func(t *testing.T) {
		srv := vcr.New(t, path, server, vcr.WithMode(vcr.ReplayOnly))
		if !srv.Recording() {
			t.Fatal("MCPTAPE_VCR=record, but the cassette is replayed")
		}
		if got := callEcho(t, srv, "echo", "text", "two"); got != "two" {
			t.Errorf("echo %q", got)
		}
	})
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"two"`) || strings.Contains(string(b), `"one"`) {
		t.Errorf("the cassette should hold the second recording only (%v)", err)
	}
}

// A recording made again (Record) by a test that fails leaves the cassette
// it would have replaced as it was: same bytes, same file. Guards "a
// recording is saved only when the test passes" where a cassette exists.
func TestNew_FailedRecordKeepsOldCassette(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "c.db")
	server := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}
	t.Run("first", func(t *testing.T) {
		if got := callEcho(t, vcr.New(t, path, server), "echo", "text", "old"); got != "old" {
			t.Errorf("echo %q", got)
		}
	})
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the passing test saved no cassette: %v", err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f := runFake(t, func(tb *fakeTB) {
		srv := vcr.New(tb, path, server, vcr.WithMode(vcr.Record))
		if !srv.Recording() {
			tb.Errorf("mode record, but the cassette is replayed")
		}
		if got := callEcho(tb, srv, "echo", "text", "new"); got != "new" {
			tb.Errorf("echo %q", got)
		}
		tb.Errorf("the host under test got it wrong")
	})
	if !f.Failed() || !strings.Contains(f.log(), "was not written") {
		t.Errorf("failed %v, log:\n%s", f.Failed(), f.log())
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, old) {
		t.Fatalf("the failing recording changed the old cassette (%v)", err)
	}
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Errorf("the old cassette was replaced (%v)", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files left beside the cassette: %v", entries)
	}
}

// MCPTAPE_VCR=replay (or ReplayOnly) with no cassette fails the test and
// never records: the server is not started, even if the test goes on to
// connect. Guards "fails a test whose cassette is missing instead of
// recording".
func TestNew_ReplayOnlyNeverStartsServer(t *testing.T) {
	goServer := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	for _, tt := range []struct {
		name string
		env  string
		opts []vcr.Option
	}{
		{"the mode", "", []vcr.Option{vcr.WithMode(vcr.ReplayOnly)}},
		{"the environment", "replay", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(vcr.EnvMode, tt.env)
			marker := filepath.Join(t.TempDir(), "started")
			command := []string{"sh", "-c", `touch "$0" && exec "$1"`, marker, goServer}
			dir := t.TempDir()
			f := runFake(t, func(tb *fakeTB) {
				srv := vcr.New(tb, filepath.Join(dir, "c.db"), command, tt.opts...)
				callEcho(tb, srv, "echo", "text", "hi") // a test going on as if all were well
			})
			if !f.Failed() || !strings.Contains(f.log(), "only replays") {
				t.Errorf("failed %v, log:\n%s", f.Failed(), f.log())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the server was started, though this run only replays")
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("files left in the cassette's directory: %v", entries)
			}
		})
	}
}

// TestNewHTTP_RecordedRestartReplays: the server restarts between two
// calls, and go-sdk's server answers the client's next POST with 404 and
// a text body ("session not found"). go-sdk's client ends its session
// (ErrSessionMissing) and the host connects anew. The recording keeps
// the 404 on the call it refused (the text as a frame of its own), so
// the replay gives the same 404 where it came, once, and the new session
// its answer, instead of leaving the refused call waiting for an answer
// that was never recorded.
func TestNewHTTP_RecordedRestartReplays(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "restart.db")
	newHandler := func() http.Handler {
		s := mcp.NewServer(&mcp.Implementation{Name: "restarting", Version: "1.0.0"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
			func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	var current atomic.Pointer[http.Handler]
	h := newHandler()
	current.Store(&h)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	defer upstream.Close()

	// scenario calls echo, lets restart happen, calls echo again in the
	// same session, then in a new one.
	scenario := func(t *testing.T, srv *vcr.Server, restart func()) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		open := func() *mcp.ClientSession {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			return cs
		}
		echo := func(cs *mcp.ClientSession, text string) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			if err == nil && res.Content[0].(*mcp.TextContent).Text != text {
				t.Errorf("echo %q answered %+v", text, res.Content[0])
			}
			return err
		}
		cs := open()
		defer cs.Close()
		if err := echo(cs, "before"); err != nil {
			t.Fatalf("before the restart: %v", err)
		}
		restart()
		if err := echo(cs, "after"); !errors.Is(err, mcp.ErrSessionMissing) {
			t.Fatalf("after the restart, in the old session: %v; want ErrSessionMissing", err)
		}
		again := open()
		defer again.Close()
		if err := echo(again, "after"); err != nil {
			t.Fatalf("after the restart, in a new session: %v", err)
		}
	}
	t.Run("recorded", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", vcr.WithMode(vcr.Record))
		scenario(t, srv, func() { h := newHandler(); current.Store(&h) })
	})
	upstream.Close()
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			if status, gone := m.HTTP.Refusal(); m.Dir == store.C2S && status != 0 {
				refused = append(refused, fmt.Sprintf("%d gone=%v note=%q", status, gone, m.Note))
			}
		}
	}
	if want := []string{`404 gone=true note="refused without a message: session not found"`}; !slices.Equal(refused, want) {
		t.Fatalf("refusals recorded %q, want %q", refused, want)
	}
	t.Run("replayed", func(t *testing.T) {
		scenario(t, vcr.NewHTTP(t, path, upstream.URL+"/mcp"), func() {})
	})
}

// vcr records a .db, so a cassette named otherwise fails at once in a run
// that would write it: it used to be saved as a .db under the .jsonl name,
// and the next run failed to read it ("bad JSONL cassette"). A JSONL
// export that exists still replays.
func TestNew_CassetteName(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	server := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}
	db := filepath.Join(t.TempDir(), "c.db")
	t.Run("record", func(t *testing.T) {
		if got := callEcho(t, vcr.New(t, db, server), "echo", "text", "hi"); got != "hi" {
			t.Errorf("echo %q", got)
		}
	})
	var export bytes.Buffer
	if err := store.Export(db, &export, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    string
		exists  bool // holds the export
		mode    vcr.Mode
		wantLog string // "": the test passes, replaying
	}{
		{"a recording named .jsonl", "stdio.jsonl", false, vcr.RecordOnce, "stdio.jsonl: this run would record it, and a recording is a .db"},
		{"a recording named .har", "stdio.har", false, vcr.RecordOnce, "this run would record it, and a recording is a .db"},
		{"recording again over an export", "stdio.jsonl", true, vcr.Record, "this run would record it"},
		{"new episodes added to an export", "stdio.jsonl", true, vcr.ReplayWithNew, "mode new would add to it, and a recording is a .db"},
		{"an export replays", "stdio.jsonl", true, vcr.RecordOnce, ""},
		{"an export replays only", "stdio.jsonl", true, vcr.ReplayOnly, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			if tt.exists {
				if err := os.WriteFile(path, export.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var reached atomic.Bool
			f := runFake(t, func(tb *fakeTB) {
				srv := vcr.New(tb, path, server, vcr.WithMode(tt.mode))
				reached.Store(true)
				if got := callEcho(tb, srv, "echo", "text", "hi"); got != "hi" {
					tb.Errorf("echo %q", got)
				}
				if srv.Recording() {
					tb.Errorf("recording, want a replay")
				}
			})
			if tt.wantLog == "" {
				if f.Failed() {
					t.Errorf("the replay failed:\n%s", f.log())
				}
				return
			}
			if !f.Failed() || reached.Load() || !strings.Contains(f.log(), tt.wantLog) {
				t.Errorf("failed %v, went on after New %v; want a failure at once saying %q, log:\n%s", f.Failed(), reached.Load(), tt.wantLog, f.log())
			}
			if b, err := os.ReadFile(path); tt.exists && !bytes.Equal(b, export.Bytes()) {
				t.Errorf("the export changed (%v)", err)
			}
			if entries, _ := os.ReadDir(dir); tt.exists && len(entries) != 1 || !tt.exists && len(entries) != 0 {
				t.Errorf("files beside the cassette: %v", entries)
			}
		})
	}
}
