package tsv2_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/interop/interoptest"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// TestStdio: the v2 client, in each mode, through `mcpspy record --
// node v2-server.mjs`, then against `mcpmock serve` replaying that
// recording; the client sees the same both times.
//
// In auto and pin modes the SDK does not probe on the process it talks
// to: it spawns its command a first time for server/discover alone (a
// "disposable sibling", its stderr discarded), and once it has the
// answer ends it (stdin closed and SIGTERM at once, SIGKILL a second
// later), then spawns the command again for the session proper, which
// sends no discover and versions each request in its _meta. Its reason:
// stdio servers of other SDKs exit on any request before initialize. So
// mcpspy records two sessions, the first of them only the probe, and
// two mcpmock processes replay, each of them the whole cassette.
func TestStdio(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "v2.db")
			interoptest.LogOnFailure(t, db)
			spy := []string{"--", peertest.Binary(t, "mcpspy"), "record", "-o", db, "--"}
			live := client(t, mode, "echo", `{"text":"hi"}`, slices.Concat(spy, peertest.NodeScript(t, "v2-server.mjs"))...)
			want := []string{"version " + spoken[mode], "tools echo,add", "call echo: echo: hi"}
			if diff := cmp.Diff(want, live); diff != "" {
				t.Fatalf("live transcript (-want +got):\n%s", diff)
			}
			probed := mode != "legacy"
			processes := 1
			if probed {
				processes = 2
			}
			tape := interoptest.WaitEnded(t, db, processes)
			if probed {
				checkProbe(t, tape.Sessions[0])
				checkStateless(t, tape.Sessions[1])
			} else {
				checkLegacy(t, tape.Sessions[0])
			}

			reports := t.TempDir()
			replayed := client(t, mode, "echo", `{"text":"hi"}`, append([]string{"--"}, mockStdio(t, db, reports)...)...)
			if diff := cmp.Diff(live, replayed); diff != "" {
				t.Errorf("replayed transcript (-live +replayed):\n%s", diff)
			}
			// Each mcpmock process is a live session that replays the
			// whole cassette: the probe's, asked only server/discover,
			// leaves the session's requests unused, and the session's the
			// probe's discover (which a client of 2026-07-28 need not
			// send, so it is never unused).
			wantReports := []string{"matched 3, unmatched [], unused []"}
			if probed {
				wantReports = []string{
					"matched 1, unmatched [], unused [v2.db s2#1 tools/list v2.db s2#3 tools/call {\"arguments\":{\"text\":\"hi\"},\"name\":\"echo\"}]",
					"matched 2, unmatched [], unused []",
				}
			}
			if diff := cmp.Diff(wantReports, summarize(waitReports(t, reports, processes))); diff != "" {
				t.Errorf("mcpmock reports (-want +got):\n%s", diff)
			}
		})
	}
}

// summarize is reports in short, sorted.
func summarize(reports []replay.Report) []string {
	var out []string
	for _, r := range reports {
		out = append(out, fmt.Sprintf("matched %d, unmatched %v, unused %v", r.Matched, r.Unmatched, r.Unused))
	}
	slices.Sort(out)
	return out
}

// checkSession checks the messages of session s (as shape lists them)
// and what its info kept of the opening: the handshake method and the
// version, with the client's and the server's identity.
func checkSession(t *testing.T, s store.TapeSession, want []string, method, version string) {
	t.Helper()
	if diff := cmp.Diff(want, shape(s)); diff != "" {
		t.Errorf("session %s (-want +got):\n%s", s.Info.ID, diff)
	}
	h := s.Info.Handshake
	if h.Method != method || h.ProtocolVersion != version || string(h.ClientInfo) != clientInfo ||
		string(h.ServerInfo) != `{"name":"v2-server","version":"2.4.0"}` {
		t.Errorf("session %s: handshake %+v, want method %q, version %q", s.Info.ID, h, method, version)
	}
}

// checkLegacy checks the session of a client in legacy mode: the
// handshake era, with no sign of 2026-07-28.
func checkLegacy(t *testing.T, s store.TapeSession) {
	t.Helper()
	checkSession(t, s, []string{
		"c2s request initialize", "s2c response id=0",
		"c2s notification notifications/initialized",
		"c2s request tools/list", "s2c response id=1",
		"c2s request tools/call", "s2c response id=2",
	}, "initialize", "2025-11-25")
	checkExit0(t, s)
}

// checkProbe checks the session of the SDK's disposable sibling: the
// probe and its answer, and an end the client caused. The sibling sends
// nothing after its discover, so the session's version is the one its
// discover's _meta asked for, which the answer's supportedVersions list.
func checkProbe(t *testing.T, s store.TapeSession) {
	t.Helper()
	checkSession(t, s, []string{"c2s request server/discover", `s2c response id="server-discover-probe-1"`},
		"server/discover", "2026-07-28")
	// The SDK closes the sibling's stdin and sends it SIGTERM in the same
	// breath: which of the two mcpspy sees first is a race, and either
	// is a true end. Never the server's own exit.
	if e := s.Info.End; e.Reason != store.EndEOF && e.Reason != store.EndSignal {
		t.Errorf("session %s: end %+v, want eof or signal", s.Info.ID, e)
	}
}

// checkStateless checks the session proper of a client in auto or pin
// mode: 2026-07-28 requests, no discover of its own, no handshake.
func checkStateless(t *testing.T, s store.TapeSession) {
	t.Helper()
	checkSession(t, s, []string{
		"c2s request tools/list", "s2c response id=0",
		"c2s request tools/call", "s2c response id=1",
	}, "", "2026-07-28")
	checkExit0(t, s)
}

// checkExit0 checks that a session ended as the SDK's close ends it: it
// closes stdin, and the server exits 0.
func checkExit0(t *testing.T, s store.TapeSession) {
	t.Helper()
	if e := s.Info.End; e.Reason != store.EndEOF || e.ExitCode == nil || *e.ExitCode != 0 {
		t.Errorf("session %s: end %+v, want eof, exit code 0", s.Info.ID, e)
	}
}

// TestStdio_BothErasInOneCassette: mcpspy records every session into one
// cassette, so a host whose clients speak both eras (the v2 client in
// legacy mode calling echo and add, then in pin mode calling echo) leaves
// a cassette holding tools/list and the echo call in both eras, the add
// call in the handshake era only. Replayed, each client is answered from
// its own era's recording where there is one: a 2026-07-28 client given
// the handshake-era tools/list (recorded first) refused it, for want of
// resultType. The add call it gets from the handshake era with what
// 2026-07-28 requires added (resultType), which it refused without.
func TestStdio_BothErasInOneCassette(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "v2.db")
	interoptest.LogOnFailure(t, db)
	spy := []string{"--", peertest.Binary(t, "mcpspy"), "record", "-o", db, "--"}
	server := peertest.NodeScript(t, "v2-server.mjs")
	calls := []struct{ mode, tool, args string }{
		{"legacy", "echo", `{"text":"hi"}`},
		{"legacy", "add", `{"a":1,"b":2}`},
		{"pin", "echo", `{"text":"hi"}`},
	}
	for _, c := range calls {
		client(t, c.mode, c.tool, c.args, slices.Concat(spy, server)...)
	}
	interoptest.WaitEnded(t, db, 4) // the pin run's probe is a session of its own
	for _, mode := range modes {
		for _, c := range calls[:2] {
			t.Run(mode+" "+c.tool, func(t *testing.T) {
				reports := t.TempDir()
				replayed := client(t, mode, c.tool, c.args, append([]string{"--"}, mockStdio(t, db, reports)...)...)
				want := []string{"version " + spoken[mode], "tools echo,add", map[string]string{"echo": "call echo: echo: hi", "add": "call add: 3"}[c.tool]}
				if diff := cmp.Diff(want, replayed); diff != "" {
					t.Errorf("replayed transcript (-want +got):\n%s", diff)
				}
				n := 2
				if mode == "legacy" {
					n = 1
				}
				for _, r := range waitReports(t, reports, n) {
					if len(r.Unmatched) > 0 {
						t.Errorf("report: unmatched %+v", r.Unmatched)
					}
				}
			})
		}
	}
}
