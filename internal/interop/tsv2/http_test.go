package tsv2_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcptape/mcptape/internal/interop/interoptest"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// The call every HTTP test makes: weather's region is marked x-mcp-header
// (SEP-2243), so a 2026-07-28 client mirrors it in Mcp-Param-Region; not
// being ASCII, in its =?base64?…?= form.
const (
	weatherArgs   = `{"region":"Zürich Nord","day":"Mon"}`
	weatherRegion = "=?base64?WsO8cmljaCBOb3Jk?="
)

// TestHTTP: the v2 client, in each mode, through mcpspy to
// v2-http-server.mjs (createMcpHandler: 2026-07-28, with stateless legacy
// serving as its fallback), then against mcpmock replaying that
// recording over Streamable HTTP; the client sees the same both times,
// and mcpspy kept the 2026-07-28 headers as the client sent them.
//
// Neither era has sessions here (the legacy fallback issues no
// Mcp-Session-Id), so mcpspy makes a session of each connection the
// client's fetch opens: how many is the pool's business, and the test
// takes the messages of all of them together.
func TestHTTP(t *testing.T) {
	t.Parallel()
	up := startHTTPServer(t)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "v2.db")
			interoptest.LogOnFailure(t, db)
			spy := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpspy"), "record", "-o", db, "--listen", "127.0.0.1:0", "--upstream", up)
			u := spy.WaitLine(t, "mcpspy: listening on ", 20*time.Second) + "/mcp"
			live := client(t, mode, "weather", weatherArgs, "--url", u)
			want := []string{"version " + spoken[mode], "tools echo,add,weather", "call weather: Mon in Zürich Nord: sunny"}
			if diff := cmp.Diff(want, live); diff != "" {
				t.Fatalf("live transcript (-want +got):\n%s", diff)
			}
			spy.Stop(t, 20*time.Second)
			tape, err := store.Load(db)
			if err != nil {
				t.Fatal(err)
			}
			checkHeaders(t, mode, tape)
			checkVersions(t, mode, tape)

			report := filepath.Join(dir, "report.json")
			mock := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpmock"), "serve", "--http", "127.0.0.1:0", "--report", report, db)
			u = mock.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
			replayed := client(t, mode, "weather", weatherArgs, "--url", u)
			if diff := cmp.Diff(live, replayed); diff != "" {
				t.Errorf("replayed transcript (-live +replayed):\n%s", diff)
			}
			mock.Stop(t, 20*time.Second)
			if diff := cmp.Diff([]string{"matched 3, unmatched [], unused []"}, summarize(waitReports(t, dir, 1))); diff != "" {
				t.Errorf("mcpmock report (-want +got):\n%s", diff)
			}
		})
	}
}

// checkHeaders checks the MCP headers of every client message recorded:
// after initialize a handshake-era client sends MCP-Protocol-Version and
// nothing else of MCP's; a 2026-07-28 client sends the version on every
// POST, its discover too, with Mcp-Method, and Mcp-Name and Mcp-Param-*
// on a tools/call. Each must agree with the body, which is what a
// 2026-07-28 server checks (400, -32020 if not).
func checkHeaders(t *testing.T, mode string, tape *store.Tape) {
	t.Helper()
	var methods []string
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			if m.Dir != store.C2S {
				continue
			}
			sum := jsonrpc.Classify(m.Frame)
			methods = append(methods, sum.Method)
			h := http.Header(m.HTTP.RequestHeader)
			got := map[string]string{}
			for _, k := range []string{"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Param-Region"} {
				if v := h.Values(k); len(v) > 0 {
					got[k] = v[0]
					if len(v) > 1 {
						t.Errorf("%s seq %d: %d %s headers", s.Info.ID, m.Seq, len(v), k)
					}
				}
			}
			want := map[string]string{"Mcp-Protocol-Version": spoken[mode]}
			switch {
			case mode == "legacy" && sum.Method == "initialize":
				want = map[string]string{}
			case mode != "legacy":
				want["Mcp-Method"] = sum.Method
				if sum.Method == "tools/call" {
					want["Mcp-Name"] = sum.Tool
					want["Mcp-Param-Region"] = weatherRegion
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s seq %d %s: headers (-want +got):\n%s", s.Info.ID, m.Seq, sum.Method, diff)
			}
		}
	}
	want := map[string][]string{
		"legacy": {"initialize", "notifications/initialized", "tools/list", "tools/call"},
		"auto":   {"server/discover", "tools/list", "tools/call"},
		"pin":    {"server/discover", "tools/list", "tools/call"},
	}[mode]
	if diff := cmp.Diff(want, methods, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("client messages recorded (-want +got):\n%s", diff)
	}
}

// checkVersions checks the version each session's info names. A
// connection that carried a 2026-07-28 request names 2026-07-28 (from the
// request's _meta, or its discover's MCP-Protocol-Version header). A
// handshake-era connection names 2025-11-25 only if it carried the
// initialize: the store does not read the MCP-Protocol-Version header of
// the others (the legacy fallback issues no Mcp-Session-Id, which would
// tie them to the initialize), so they name none.
func checkVersions(t *testing.T, mode string, tape *store.Tape) {
	t.Helper()
	for _, s := range tape.Sessions {
		first := jsonrpc.Classify(s.Messages[0].Frame).Method
		want := spoken[mode]
		if mode == "legacy" && first != "initialize" {
			want = ""
		}
		if got := s.Info.Handshake.ProtocolVersion; got != want {
			t.Errorf("session %s (first %s): version %q, want %q", s.Info.ID, first, got, want)
		}
	}
}
