package vcr_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/vcr"
)

// echoes connects a go-sdk client through srv and calls the Go peer's
// echo tool once with each text, returning the first call's error: an
// unmatched call gets a JSON-RPC error, which a host may swallow.
func echoes(tb testing.TB, srv *vcr.Server, texts ...string) error {
	tb.Helper()
	ctx, cs, end := connect(tb, srv)
	defer end()
	var first error
	for _, text := range texts {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Server's own AssertNoUnmatched, AssertAllUsed and Check hold a replay to
// its cassette, as mocktest's do, and pass a recording, whose every
// request went to the real server: a test calls them in every mode.
func TestServer_Assert(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "echo.db")
	goServer := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}

	// Each body makes its Server, calls echo with texts, then runs every
	// check; the fake test's log is what they reported.
	run := func(t *testing.T, texts ...string) (f *fakeTB, checkErr error) {
		f = runFake(t, func(tb *fakeTB) {
			srv := vcr.New(tb, path, goServer)
			_ = echoes(tb, srv, texts...)
			checkErr = srv.Check()
			srv.AssertNoUnmatched()
			srv.AssertAllUsed()
		})
		return f, checkErr
	}

	t.Run("recording", func(t *testing.T) {
		// Two echoes, of which a replay below asks for one.
		f, checkErr := run(t, "hi", "also recorded")
		if checkErr != nil || f.Failed() {
			t.Fatalf("a recording was held to a cassette: Check %v, log:\n%s", checkErr, f.log())
		}
		if !strings.Contains(f.log(), "vcr: recorded "+path) {
			t.Fatalf("nothing recorded; log:\n%s", f.log())
		}
	})

	t.Run("replaying everything", func(t *testing.T) {
		if f, checkErr := run(t, "hi", "also recorded"); checkErr != nil || f.Failed() {
			t.Errorf("a replay that used the whole cassette failed: Check %v, log:\n%s", checkErr, f.log())
		}
	})

	t.Run("replaying part", func(t *testing.T) {
		f := runFake(t, func(tb *fakeTB) {
			srv := vcr.New(tb, path, goServer)
			if err := echoes(tb, srv, "hi"); err != nil {
				tb.Fatalf("echo: %v", err)
			}
			srv.AssertNoUnmatched()
			if tb.Failed() {
				return
			}
			srv.AssertAllUsed()
		})
		if log := f.log(); !strings.Contains(log, `recorded but never used: echo.db s1#`) || strings.Contains(log, "unmatched") {
			t.Errorf("AssertNoUnmatched should pass and AssertAllUsed name the unused echo; log:\n%s", log)
		}
	})

	t.Run("replaying a request not recorded", func(t *testing.T) {
		f, checkErr := run(t, "not recorded")
		want := `mocktest: unmatched tools/call {"arguments":{"text":"not recorded"},"name":"echo"}`
		if checkErr == nil || !strings.Contains(checkErr.Error(), "unmatched tools/call") {
			t.Errorf("Check = %v, want the unmatched call", checkErr)
		}
		if log := f.log(); strings.Count(log, want) != 2 { // AssertNoUnmatched's and AssertAllUsed's
			t.Errorf("log should name the unmatched call twice (%q):\n%s", want, log)
		}
	})
}
