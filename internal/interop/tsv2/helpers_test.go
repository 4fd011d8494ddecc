package tsv2_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// modes are v2-client.mjs's MODE values, the SDK's versionNegotiation
// modes: legacy (initialize, the default), auto (server/discover first,
// initialize if the server refuses it) and pin (2026-07-28 only).
var modes = []string{"legacy", "auto", "pin"}

// spoken is the version each mode settles on with the v2 servers, which
// serve both eras.
var spoken = map[string]string{"legacy": "2025-11-25", "auto": "2026-07-28", "pin": "2026-07-28"}

// client runs v2-client.mjs in mode: it lists the tools, calls tool with
// args (JSON), and returns what it saw. target is "--" and a server's
// command line, or "--url" and an endpoint.
func client(t *testing.T, mode, tool, args string, target ...string) []string {
	t.Helper()
	return peertest.NodeTranscript(t, 90*time.Second, []string{"MODE=" + mode}, "v2-client.mjs", slices.Concat([]string{tool, args}, target)...)
}

// shape lists a session's messages as "dir kind method-or-id".
func shape(s store.TapeSession) []string {
	var out []string
	for _, m := range s.Messages {
		sum := jsonrpc.Classify(m.Frame)
		what := sum.Method
		if what == "" {
			what = "id=" + sum.ID
		}
		out = append(out, fmt.Sprintf("%s %s %s", m.Dir, sum.Kind, what))
	}
	return out
}

// clientInfo is what v2-client.mjs names itself.
const clientInfo = `{"name":"v2-client","version":"1.0.0"}`

// mockStdio is the command line of mcpmock replaying db over stdio, each
// process writing its report to dir/report.PID. In auto and pin modes the
// SDK starts its server's command twice (see TestStdio), and with one
// --report file for both the second process's report replaces the
// first's.
func mockStdio(t *testing.T, db, dir string) []string {
	t.Helper()
	return []string{"/bin/sh", "-c", `exec "$0" serve --report "$1/report.$$" "$2"`, peertest.Binary(t, "mcpmock"), dir, db}
}

// waitReports waits until dir holds n reports (written when each mcpmock
// exits: over stdio that is after the client has exited, see waitEnded)
// and returns them, in no particular order.
func waitReports(t *testing.T, dir string, n int) []replay.Report {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		paths, _ := filepath.Glob(filepath.Join(dir, "report.*"))
		if len(paths) >= n {
			var reports []replay.Report
			for _, p := range paths {
				reports = append(reports, readReport(t, p))
			}
			if len(paths) > n {
				t.Fatalf("%d mcpmock reports, want %d: %+v", len(paths), n, reports)
			}
			return reports
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mcpmock reports within 20 s, want %d", len(paths), n)
		}
		time.Sleep(20 * time.Millisecond) // polling, with a deadline
	}
}

// readReport reads the report mcpmock wrote (atomically) at path.
func readReport(t *testing.T, path string) replay.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("mcpmock wrote no report %s", path)
	}
	var r replay.Report
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		t.Fatalf("report %s: %v\n%s", path, err, b)
	}
	return r
}

// startHTTPServer starts v2-http-server.mjs on a loopback port and returns
// its base URL (it serves /mcp). The test's Cleanup stops it.
func startHTTPServer(t *testing.T) string {
	t.Helper()
	env, _ := peertest.FreePortEnv(t)
	p := peertest.Start(t, "", []string{env}, nil, nil, peertest.NodeScript(t, "v2-http-server.mjs")...)
	u := p.WaitLine(t, "v2-http-server listening on ", 30*time.Second)
	base, ok := strings.CutSuffix(u, "/mcp")
	if !ok {
		t.Fatalf("v2-http-server listens on %q, want a URL ending /mcp", u)
	}
	return base
}
