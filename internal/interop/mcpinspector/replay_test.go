package mcpinspector_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// replayStdio runs the inspector with method against
// `mcpmock serve --report` on the cassette's session, as its stdio
// server, and returns what it printed and mcpmock's report.
func replayStdio(t *testing.T, db, session string, method []string) (string, replay.Report) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	out := mustInspect(t, stdioArgs(method, peertest.Binary(t, "mcpmock"), "serve", "--report", report, "--session", session, db)...)
	return out, readReport(t, report)
}

// mock is `mcpmock serve --http --report` on args.
type mock struct {
	p      *peertest.Process
	base   string // http://127.0.0.1:PORT: Streamable HTTP at /mcp, legacy SSE at /sse
	report string
}

func startMock(t *testing.T, args ...string) *mock {
	t.Helper()
	m := &mock{report: filepath.Join(t.TempDir(), "report.json")}
	argv := append([]string{peertest.Binary(t, "mcpmock"), "serve", "--http", "127.0.0.1:0", "--report", m.report}, args...)
	m.p = peertest.Start(t, "", nil, nil, nil, argv...)
	m.base = strings.TrimSuffix(m.p.WaitLine(t, "mcpmock: listening on ", 20*time.Second), "/mcp")
	return m
}

// finish stops mcpmock and returns its report.
func (m *mock) finish(t *testing.T) replay.Report {
	t.Helper()
	m.p.Stop(t, 15*time.Second)
	return readReport(t, m.report)
}

// The shipped cassette was recorded with the TypeScript SDK's client,
// which never set a log level. The inspector sets "debug" as soon as it
// has connected to a server that declares logging (server-everything
// does), and gives up if that fails. mcpmock answers the unrecorded
// logging/setLevel with {} for such a server, and counts it matched; the
// rest is the recording's: the echo call with the recorded argument gets
// the recorded answer, and what the inspector did not call stays unused.
func TestReplay_ShippedCassette(t *testing.T) {
	t.Parallel()
	call := []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello from mcptape"}
	wantUnused := []string{
		`everything-stdio.db s1#9 tools/call {"arguments":{"a":2,"b":3},"name":"get-sum"}`,
		`everything-stdio.db s1#11 tools/call {"arguments":{"location":"New York"},"name":"get-structured-content"}`,
		`everything-stdio.db s1#13 tools/call {"name":"get-tiny-image"}`,
		`everything-stdio.db s1#15 tools/call {"arguments":{"duration":0.3,"steps":3},"name":"trigger-long-running-operation"}`,
	}
	check := func(t *testing.T, out string, r replay.Report) {
		t.Helper()
		if got := callText(t, []byte(out)); got != "text: Echo: hello from mcptape" {
			t.Errorf("echo printed %q", got)
		}
		// initialize, logging/setLevel, tools/list, tools/call
		if r.Matched != 4 || len(r.Unmatched) > 0 {
			t.Errorf("report: %d matched (want 4), unmatched %+v", r.Matched, r.Unmatched)
		}
		if d := cmp.Diff(wantUnused, r.Unused); d != "" {
			t.Errorf("unused (-want +got):\n%s", d)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		out, r := replayStdio(t, shippedCopy(t), "s1", call)
		check(t, out, r)
	})
	t.Run("Streamable HTTP", func(t *testing.T) {
		t.Parallel()
		m := startMock(t, shippedCopy(t))
		out := mustInspect(t, urlArgs(m.base+"/mcp", "http", call)...)
		check(t, out, m.finish(t))
	})
}

// shippedCopy returns a copy of cassettes/everything-stdio.db, under the
// same name: nothing a test does may touch the shipped file.
func shippedCopy(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "everything-stdio.db")
	if err := os.WriteFile(db, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}
