package vcr_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/vcr"
)

// A server started through a wrapper that leaves a child behind (sh -c
// "sleep & exec server", as npx or uv run may) is recorded, and the test
// ends within the shutdown steps: the child holding the server's stderr
// once made cmd.Wait, and the test's cleanup, wait for it, and it outlived
// the test.
func TestNew_ServerLeavesAChild(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	tests := []struct {
		name  string
		child string // what the wrapper starts before it execs the server
	}{
		{"the child holds stderr", "sleep 300 >/dev/null"},
		{"the child holds stdout", "sleep 300 2>/dev/null"},
		{"the child ignores SIGTERM", "sh -c 'trap \"\" TERM; sleep 300 & wait'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			var childPID atomic.Int64 // set by the fake test, read here if it hangs
			t.Cleanup(func() {        // the test failed: leave no child running
				if pid := childPID.Load(); pid > 0 {
					_ = syscall.Kill(int(pid), syscall.SIGKILL)
				}
			})
			path := filepath.Join(dir, "x.db")
			command := []string{"sh", "-c", tt.child + " & echo $! >" + pidFile + "; exec " + server}
			ended := make(chan *fakeTB, 1)
			start := time.Now()
			go func() {
				ended <- runFake(t, func(tb *fakeTB) {
					srv := vcr.New(tb, path, command)
					if got := callEcho(tb, srv, "echo", "text", "hi"); got != "hi" {
						tb.Errorf("echo answered %q", got)
					}
					b, err := os.ReadFile(pidFile)
					if err != nil {
						tb.Errorf("the wrapper wrote no pid: %v", err)
					}
					pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
					childPID.Store(int64(pid))
				})
			}()
			// Close stdin, 2 s, SIGTERM, 2 s, SIGKILL: a few seconds at
			// most, with room for a loaded machine.
			var f *fakeTB
			select {
			case f = <-ended:
			case <-time.After(20 * time.Second):
				t.Fatalf("the test's cleanup still waits %v after it began", time.Since(start).Round(time.Second))
			}
			if f.Failed() {
				t.Fatalf("the recording failed:\n%s", f.log())
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("no cassette: %v", err)
			}
			pid := int(childPID.Load())
			if pid <= 0 {
				t.Fatal("no child pid")
			}
			if alive(pid) {
				t.Errorf("the server's child %d outlived the test", pid)
			}
		})
	}
}

// alive says whether process pid runs: one gone, or a zombie no one reaps
// (PID 1 in a container may not), is not running.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, the state follows its ')'.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// A server that never answers (it exits at once: no key) leaves no
// cassette, even when the test passes because it expected the host to
// fail: replayed, that cassette had the host wait for answers until its
// deadline. The log says why, with the server's stderr and exit.
func TestNew_ServerAnsweredNothing(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	tests := []struct {
		name    string
		script  string
		wantLog []string
	}{
		{"it says why on stderr", "echo 'fatal: API_KEY not set' >&2; exit 3",
			[]string{"vcr: the server answered nothing (it ended with exit code 3), so", "was not written; its stderr (or the proxy's warnings):\nfatal: API_KEY not set"}},
		{"it says nothing", "exit 4",
			[]string{"the server answered nothing (it ended with exit code 4)", "its stderr (or the proxy's warnings): (it wrote nothing)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "crash.db")
			f := runFake(t, func(tb *fakeTB) {
				srv := vcr.New(tb, path, []string{"sh", "-c", tt.script})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if _, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil); err == nil {
					tb.Errorf("the host connected to a server that exited")
				}
			})
			if f.Failed() {
				t.Fatalf("the test failed:\n%s", f.log())
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
