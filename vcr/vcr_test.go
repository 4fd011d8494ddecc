package vcr_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// callEcho connects a go-sdk client through srv and calls tool with
// {argName: text}, returning the first text content.
func callEcho(tb testing.TB, srv *vcr.Server, tool, argName, text string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer cs.Close()
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
		srv.Mock().AssertAllUsed()
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
			wantLog: []string{"the host under test got it wrong", "the test failed, so", "was not written"}},
		{name: "replay only, no cassette", command: goServer, opts: []vcr.Option{vcr.WithMode(vcr.ReplayOnly)},
			wantLog: []string{"does not exist, and this run only replays; record it with MCPTAPE_VCR=once"}},
		{name: "the environment says replay only", env: "replay", command: goServer,
			wantLog: []string{"only replays"}},
		{name: "a bad environment value", env: "bogus", command: goServer,
			wantLog: []string{`MCPTAPE_VCR="bogus": want once, replay or record`}},
		{name: "no cassette and no command",
			wantLog: []string{"does not exist and there is no server command to record it from"}},
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
