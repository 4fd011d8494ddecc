package vcr_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// host is a go-sdk client connected through srv, for several calls.
type host struct {
	ctx context.Context
	cs  *mcp.ClientSession
}

func connectHost(tb testing.TB, srv *vcr.Server, tr mcp.Transport) *host {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	if tr == nil {
		tr = srv.Transport()
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return &host{ctx: ctx, cs: cs}
}

// call calls tool with args and returns its text content.
func (h *host) call(tb testing.TB, tool string, args map[string]any) string {
	tb.Helper()
	res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("call %s %v: %v", tool, args, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " | ")
}

// readFile returns path's bytes, failing the test if it cannot.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noTempFiles checks that nothing but the cassette is left in its
// directory.
func noTempFiles(t *testing.T, path string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			t.Errorf("left in the cassette's directory: %s", e.Name())
		}
	}
}

// The reference server recorded; then, in ReplayWithNew, a call the
// cassette has is replayed and one it lacks goes to server-everything
// and is added; then both replay without the server.
func TestNew_ReplayWithNew(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "everything.db")
	everything := peertest.ServerEverything(t, "stdio")
	echo := map[string]any{"message": "hello vcr"}
	sum := map[string]any{"a": 5, "b": 7}

	t.Run("recorded", func(t *testing.T) {
		srv := vcr.New(t, path, everything, vcr.WithMode(vcr.ReplayWithNew))
		if !srv.Recording() {
			t.Fatal("no cassette yet: ReplayWithNew should record it, as RecordOnce does")
		}
		if got := connectHost(t, srv, nil).call(t, "echo", echo); got != "Echo: hello vcr" {
			t.Errorf("echo answered %q", got)
		}
	})
	recorded := readFile(t, path)

	t.Run("new episodes", func(t *testing.T) {
		srv := vcr.New(t, path, everything, vcr.WithMode(vcr.ReplayWithNew))
		if srv.Recording() || srv.Mock() == nil {
			t.Fatal("the cassette exists: it should replay")
		}
		h := connectHost(t, srv, nil)
		if got := h.call(t, "echo", echo); got != "Echo: hello vcr" {
			t.Errorf("echo replayed %q", got)
		}
		if n := srv.NewRequests(); n != 0 {
			t.Errorf("after the recorded call, %d request(s) went to the real server, want 0", n)
		}
		if got := h.call(t, "get-sum", sum); got != "The sum of 5 and 7 is 12." {
			t.Errorf("get-sum answered %q", got)
		}
		if n := srv.NewRequests(); n != 1 {
			t.Errorf("after the new call, %d request(s) went to the real server, want 1", n)
		}
		// Received covers both, whoever answered.
		if calls := srv.ToolCalls("get-sum"); len(calls) != 1 {
			t.Errorf("ToolCalls(get-sum) = %s", calls)
		}
		if r := srv.Mock().Report(); len(r.Unmatched) != 0 {
			t.Errorf("unmatched: %+v", r.Unmatched)
		}
		if b := readFile(t, path); !bytes.Equal(b, recorded) {
			t.Error("the cassette changed before the test ended")
		}
	})
	noTempFiles(t, path)
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 2 {
		t.Fatalf("%d sessions, want the recording and one new", len(tape.Sessions))
	}
	added := tape.Sessions[1]
	var frames strings.Builder
	for _, m := range added.Messages {
		frames.Write(m.Frame)
		frames.WriteByte('\n')
	}
	if !strings.Contains(added.Info.Recorder, "fallback") || !strings.Contains(frames.String(), `"get-sum"`) ||
		strings.Contains(frames.String(), "hello vcr") || added.Info.End == nil {
		t.Errorf("the new session (%+v) should hold get-sum and not the replayed echo:\n%s", added.Info, frames.String())
	}

	t.Run("both replay without the server", func(t *testing.T) {
		srv := vcr.New(t, path, []string{filepath.Join(t.TempDir(), "no-such-server")}, vcr.WithMode(vcr.ReplayOnly))
		h := connectHost(t, srv, nil)
		if got := h.call(t, "echo", echo); got != "Echo: hello vcr" {
			t.Errorf("echo replayed %q", got)
		}
		if got := h.call(t, "get-sum", sum); got != "The sum of 5 and 7 is 12." {
			t.Errorf("get-sum replayed %q", got)
		}
		h.cs.Close()
		srv.Mock().AssertAllUsed()
	})
}

// What ReplayWithNew must leave alone: the cassette of a failing test,
// and of one that asked nothing new; and how it is chosen.
func TestNew_ReplayWithNewKeepsCassette(t *testing.T) {
	goServer := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}
	noServer := []string{filepath.Join(t.TempDir(), "no-such-server")}
	t.Setenv(vcr.EnvMode, "")
	base := filepath.Join(t.TempDir(), "base.db")
	t.Run("recorded", func(t *testing.T) {
		if got := connectHost(t, vcr.New(t, base, goServer), nil).call(t, "echo", map[string]any{"text": "known"}); got != "known" {
			t.Errorf("echo answered %q", got)
		}
	})
	recorded := readFile(t, base)

	tests := []struct {
		name    string
		env     string
		command []string
		body    func(tb *fakeTB, srv *vcr.Server)
		fails   bool
		wantLog string
		changed bool // the cassette should have grown
	}{
		{name: "a failing test adds nothing", command: goServer,
			body: func(tb *fakeTB, srv *vcr.Server) {
				h := connectHost(tb, srv, nil)
				if got := h.call(tb, "echo", map[string]any{"text": "known"}); got != "known" {
					tb.Errorf("echo replayed %q", got)
				}
				if got := h.call(tb, "add", map[string]any{"a": 1, "b": 2}); got != `{"sum":3}` {
					tb.Errorf("add answered %q", got)
				}
				if n := srv.NewRequests(); n != 1 {
					tb.Errorf("%d new requests, want 1", n)
				}
				tb.Errorf("the host under test got it wrong")
			},
			fails: true, wantLog: "the test failed, so the 1 request the real server answered was not added to"},
		// The server command does not exist: nothing asked of it, it is
		// never started.
		{name: "nothing new asked", command: noServer,
			body: func(tb *fakeTB, srv *vcr.Server) {
				if got := connectHost(tb, srv, nil).call(tb, "echo", map[string]any{"text": "known"}); got != "known" {
					tb.Errorf("echo replayed %q", got)
				}
				if n := srv.NewRequests(); n != 0 {
					tb.Errorf("%d new requests, want 0", n)
				}
			}},
		// NewRequests counts what the real server answered, not what it
		// was asked: one that cannot even start answers nothing, and the
		// cassette stays as it was.
		{name: "the real server cannot answer", command: noServer,
			body: func(tb *fakeTB, srv *vcr.Server) {
				h := connectHost(tb, srv, nil)
				if _, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
					tb.Errorf("add answered, though neither the cassette nor a server can")
				}
				if n := srv.NewRequests(); n != 0 {
					tb.Errorf("%d new requests, want 0: the real server answered none", n)
				}
			},
			wantLog: "the real server did not answer"},
		{name: "the environment says new", env: "new", command: goServer,
			body: func(tb *fakeTB, srv *vcr.Server) {
				if srv.Recording() {
					tb.Errorf("recording, though the cassette exists")
				}
				if got := connectHost(tb, srv, nil).call(tb, "add", map[string]any{"a": 1, "b": 2}); got != `{"sum":3}` {
					tb.Errorf("add answered %q", got)
				}
			},
			wantLog: "added 1 request the real server answered to", changed: true},
		{name: "no server command", env: "new",
			fails: true, wantLog: "mode new passes what cassette"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(vcr.EnvMode, tt.env)
			path := filepath.Join(t.TempDir(), "c.db")
			if err := os.WriteFile(path, recorded, 0o600); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			f := runFake(t, func(tb *fakeTB) {
				mode := vcr.ReplayWithNew
				if tt.env != "" {
					mode = vcr.ReplayOnly // the environment wins
				}
				srv := vcr.New(tb, path, tt.command, vcr.WithMode(mode))
				if tt.body != nil {
					tt.body(tb, srv)
				}
			})
			if f.Failed() != tt.fails {
				t.Errorf("the test failed: %v, want %v; log:\n%s", f.Failed(), tt.fails, f.log())
			}
			if !strings.Contains(f.log(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, f.log())
			}
			if changed := !bytes.Equal(readFile(t, path), recorded); changed != tt.changed {
				t.Errorf("the cassette changed: %v, want %v", changed, tt.changed)
			}
			// Not even rewritten with the same bytes: a rename would make
			// it another file.
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if replaced := !os.SameFile(before, after); replaced != tt.changed {
				t.Errorf("the cassette was replaced: %v, want %v", replaced, tt.changed)
			}
			noTempFiles(t, path)
		})
	}
}

// A go-sdk server over Streamable HTTP that wants a bearer token: recorded
// with the token given by WithHeader, then in ReplayWithNew one call from
// the cassette and one from the server, the token never recorded and a
// member WithRedact names redacted in the new session too; then both
// replay with the server gone.
func TestNewHTTP_ReplayWithNew(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "remote.db")
	var served atomic.Int64 // tools/call the real server answered
	remote := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text     string `json:"text"`
		Customer string `json:"customer"`
	}
	mcp.AddTool(remote, &mcp.Tool{Name: "echo", Description: "Echoes its text for a customer"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			served.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remote }, nil)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret-token" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer upstream.Close()
	opts := []vcr.Option{vcr.WithHeader("Authorization", "Bearer s3cret-token"), vcr.WithRedact("customer")}
	endpoint := func(srv *vcr.Server) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: srv.URL()} }
	known := map[string]any{"text": "known", "customer": "ACME-1"}
	fresh := map[string]any{"text": "fresh", "customer": "ACME-2"}

	t.Run("recorded", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", append(opts, vcr.WithMode(vcr.ReplayWithNew))...)
		if !srv.Recording() {
			t.Fatal("no cassette yet, but not recording")
		}
		// The host sends no token: WithHeader gives it to the server.
		if got := connectHost(t, srv, endpoint(srv)).call(t, "echo", known); got != "known" {
			t.Errorf("echo answered %q", got)
		}
	})
	if n := served.Load(); n != 1 {
		t.Fatalf("the server answered %d calls while recording, want 1", n)
	}

	t.Run("new episodes", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", append(opts, vcr.WithMode(vcr.ReplayWithNew))...)
		if srv.Recording() || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
			t.Fatalf("recording %v at %s: want the replay on 127.0.0.1", srv.Recording(), srv.URL())
		}
		h := connectHost(t, srv, endpoint(srv))
		if got := h.call(t, "echo", map[string]any{"text": "known", "customer": "someone else"}); got != "known" {
			t.Errorf("echo replayed %q", got)
		}
		if got := h.call(t, "echo", fresh); got != "fresh" {
			t.Errorf("echo answered %q", got)
		}
		if n := srv.NewRequests(); n != 1 {
			t.Errorf("%d new requests, want 1", n)
		}
	})
	if n := served.Load(); n != 2 {
		t.Errorf("the server answered %d calls in all, want 2: the known one is the cassette's", n)
	}
	noTempFiles(t, path)
	raw := readFile(t, path)
	for _, secret := range []string{"s3cret-token", "ACME-1", "ACME-2"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the cassette keeps %q", secret)
		}
	}
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	last := tape.Sessions[len(tape.Sessions)-1]
	var call string
	for _, m := range last.Messages {
		if strings.Contains(string(m.Frame), `"fresh"`) && m.Dir == store.C2S {
			call = string(m.Frame)
		}
	}
	if last.Info.Transport != store.TransportHTTP || !strings.Contains(call, `"customer":"[redacted]"`) {
		t.Errorf("the new session (%+v) should hold the fresh call with the customer redacted: %s", last.Info, call)
	}

	upstream.Close()
	t.Run("both replay without the server", func(t *testing.T) {
		srv := vcr.NewHTTP(t, path, upstream.URL+"/mcp", vcr.WithMode(vcr.ReplayOnly))
		h := connectHost(t, srv, endpoint(srv))
		for _, args := range []map[string]any{known, fresh} {
			if got := h.call(t, "echo", args); got != args["text"] {
				t.Errorf("echo %v replayed %q", args, got)
			}
		}
	})
}

// Only ReplayWithNew passes what the cassette lacks to the real server:
// replaying in the other modes, a request the cassette cannot answer gets
// the replay's error, the server is never started, and the cassette stays
// as it was.
func TestNew_OtherModesNeverAskTheServer(t *testing.T) {
	goServer := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	t.Setenv(vcr.EnvMode, "")
	base := filepath.Join(t.TempDir(), "base.db")
	t.Run("recorded", func(t *testing.T) {
		if got := connectHost(t, vcr.New(t, base, []string{goServer}), nil).call(t, "echo", map[string]any{"text": "known"}); got != "known" {
			t.Errorf("echo answered %q", got)
		}
	})
	recorded := readFile(t, base)
	for _, mode := range []vcr.Mode{vcr.RecordOnce, vcr.ReplayOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			if err := os.WriteFile(path, recorded, 0o600); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "started")
			command := []string{"sh", "-c", `touch "$0" && exec "$1"`, marker, goServer}
			f := runFake(t, func(tb *fakeTB) {
				srv := vcr.New(tb, path, command, vcr.WithMode(mode))
				h := connectHost(tb, srv, nil)
				if got := h.call(tb, "echo", map[string]any{"text": "known"}); got != "known" {
					tb.Errorf("echo replayed %q", got)
				}
				if res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
					tb.Errorf("add, which the cassette lacks, answered %+v", res)
				}
				if n := srv.NewRequests(); n != 0 {
					tb.Errorf("%d new requests, want 0", n)
				}
			})
			if f.Failed() {
				t.Errorf("the test failed; log:\n%s", f.log())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("mode %s started the real server", mode)
			}
			if !bytes.Equal(readFile(t, path), recorded) {
				t.Errorf("mode %s changed the cassette", mode)
			}
			noTempFiles(t, path)
		})
	}
}
