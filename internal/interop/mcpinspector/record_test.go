package mcpinspector_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/interop/interoptest"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// live is what the inspector printed in the two runs.
type live struct{ list, call string }

// checkLive checks the two runs' output against the session that
// recorded each: the tools listed are the ones the server answered, and
// echo echoed.
func checkLive(t *testing.T, l live, listSession, callSession store.TapeSession) {
	t.Helper()
	got := toolNames(t, []byte(l.list))
	if !slices.Contains(got, "echo") || !slices.Contains(got, "get-sum") {
		t.Errorf("tools/list printed %q, want server-everything's tools", got)
	}
	if d := cmp.Diff(toolNames(t, answer(t, listSession, "tools/list", "")), got); d != "" {
		t.Errorf("tools printed unlike those recorded (-recorded +printed):\n%s", d)
	}
	if got := callText(t, []byte(l.call)); got != "text: Echo: hi" {
		t.Errorf("tools/call echo printed %q\n%s", got, l.call)
	}
	if got := callText(t, answer(t, callSession, "tools/call", "echo")); got != "text: Echo: hi" {
		t.Errorf("recorded echo answer: %q", got)
	}
}

// checkSessions checks the shape of the two sessions (list run, call run)
// that follow any prefix (legacy SSE's endpoint event), and how many
// list_changed each holds: wantChanged(n) says whether n is right.
func checkSessions(t *testing.T, tape *store.Tape, prefix []string, transport string, wantChanged func(int) bool) {
	t.Helper()
	if len(tape.Sessions) != 2 {
		t.Fatalf("%d sessions, want one per inspector run", len(tape.Sessions))
	}
	for i, want := range [][]string{wantListSession, wantCallSession} {
		s := tape.Sessions[i]
		rest, changed := shape(s.Messages)
		if d := cmp.Diff(slices.Concat(prefix, want), rest); d != "" {
			t.Errorf("session %s recorded (-want +got):\n%s", s.Info.ID, d)
		}
		if !wantChanged(changed) {
			t.Errorf("session %s: %d %s notifications", s.Info.ID, changed, listChanged)
		}
		checkHandshake(t, s, transport)
	}
}

// The inspector starts `mcpspy record -- server-everything stdio` as its
// stdio server, once to list the tools and once to call echo: each run
// prints the right result, and the cassette holds each run as a session
// with every message; then mcpmock replays it to the inspector over each
// transport it serves, and the inspector prints what it printed live.
func TestRecordReplay_Stdio(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "stdio.db")
	interoptest.LogOnFailure(t, db)
	spy := slices.Concat([]string{peertest.Binary(t, "mcpspy"), "record", "-o", db, "--"}, peertest.ServerEverything(t, "stdio"))
	var l live
	l.list = mustInspect(t, stdioArgs(listTools, spy...)...)
	interoptest.WaitEnded(t, db, 1) // so that the sessions are in the order of the runs
	l.call = mustInspect(t, stdioArgs(callEcho, spy...)...)
	tape := interoptest.WaitEnded(t, db, 2)

	// server-everything sends list_changed on stdio right after
	// initialized, before the answers the inspector waits for.
	checkSessions(t, tape, nil, store.TransportStdio, func(n int) bool { return n == 1 })
	checkLive(t, l, tape.Sessions[0], tape.Sessions[1])
	for _, s := range tape.Sessions {
		// The inspector closes mcpspy's stdin and waits 2 s before SIGTERM:
		// a race-built mcpspy on a loaded machine may take longer.
		if e := s.Info.End; e.Reason != store.EndEOF && e.Reason != store.EndSignal {
			t.Errorf("session %s: end %+v, want eof (or signal)", s.Info.ID, e)
		}
	}
	if t.Failed() {
		return
	}

	t.Run("replayed over stdio", func(t *testing.T) {
		t.Parallel()
		for i, r := range []struct {
			method []string
			live   string
			asks   int // initialize, logging/setLevel, tools/list (, tools/call)
		}{{listTools, l.list, 3}, {callEcho, l.call, 4}} {
			got, report := replayStdio(t, db, tape.Sessions[i].Info.ID, r.method)
			if got != r.live {
				t.Errorf("%s: replay printed\n%s\nlive printed\n%s", r.method[1], got, r.live)
			}
			checkClean(t, report, r.asks)
		}
	})
	t.Run("replayed over Streamable HTTP", func(t *testing.T) {
		t.Parallel()
		m := startMock(t, db)
		if got := mustInspect(t, urlArgs(m.base+"/mcp", "http", listTools)...); got != l.list {
			t.Errorf("tools/list: replay printed\n%s\nlive printed\n%s", got, l.list)
		}
		if got := mustInspect(t, urlArgs(m.base+"/mcp", "http", callEcho)...); got != l.call {
			t.Errorf("tools/call: replay printed\n%s\nlive printed\n%s", got, l.call)
		}
		// Both recorded sessions are pooled, and each live session replays
		// the pool from its start (docs/REPLAY.md, "When identical requests
		// run out"): the call run's setLevel and tools/list get the list
		// run's recorded answers again. The report counts them against the
		// call session's own, so nothing is unused: the clients did what
		// was recorded, and --strict passes.
		checkClean(t, m.finish(t), 7)
	})
	t.Run("replayed over legacy SSE", func(t *testing.T) {
		t.Parallel()
		m := startMock(t, "--session", tape.Sessions[1].Info.ID, db)
		if got := mustInspect(t, urlArgs(m.base+"/sse", "sse", callEcho)...); got != l.call {
			t.Errorf("tools/call: replay printed\n%s\nlive printed\n%s", got, l.call)
		}
		checkClean(t, m.finish(t), 4)
	})
}

// The inspector over Streamable HTTP through `mcpspy record --upstream`
// to server-everything, one run to list and one to call: each run is one
// session with an Mcp-Session-Id of its own. The inspector never sends
// DELETE (the spec says a client that no longer needs its session SHOULD):
// its SDK's close only aborts its requests, so each session ends only
// when mcpspy stops, and the server keeps it until then. The call's
// recording replays to the inspector on stdio.
func TestRecordReplay_StreamableHTTP(t *testing.T) {
	t.Parallel()
	db, spy, u := recordEverythingHTTP(t, "http.db", "streamableHttp", "/mcp")
	var l live
	l.list = mustInspect(t, urlArgs(u, "http", listTools)...)
	l.call = mustInspect(t, urlArgs(u, "http", callEcho)...)
	spy.Stop(t, 15*time.Second)
	tape := interoptest.WaitEnded(t, db, 2)

	// list_changed goes on the GET stream, which the inspector opens
	// after initialized and drops when it exits: it may or may not catch it.
	checkSessions(t, tape, nil, store.TransportHTTP, func(n int) bool { return n <= 1 })
	checkLive(t, l, tape.Sessions[0], tape.Sessions[1])
	ids := map[string]bool{}
	for _, s := range tape.Sessions {
		ids[s.Info.HTTPSessionID] = true
		if e := s.Info.End; e.Reason != store.EndSignal || e.Signal != "mcpspy interrupted" {
			t.Errorf("session %s: end %+v, want mcpspy's interrupt (the inspector sends no DELETE)", s.Info.ID, e)
		}
		for _, m := range s.Messages {
			if m.HTTP == nil || m.HTTP.Method == "DELETE" {
				t.Errorf("session %s seq %d: HTTP %+v", s.Info.ID, m.Seq, m.HTTP)
			}
		}
	}
	if len(ids) != 2 || ids[""] {
		t.Errorf("Mcp-Session-Ids %v, want one per run", ids)
	}
	checkHAR(t, tape) // mcpspy export --har of a real recording
	if t.Failed() {
		return
	}

	got, report := replayStdio(t, db, tape.Sessions[1].Info.ID, callEcho)
	if got != l.call {
		t.Errorf("tools/call replayed on stdio printed\n%s\nlive printed\n%s", got, l.call)
	}
	checkClean(t, report, 4)
}

// The inspector over legacy HTTP+SSE (2024-11-05) through mcpspy to
// server-everything's sse mode: mcpspy records the endpoint event (not a
// JSON-RPC message: its data is the URI to POST to) and then the session;
// the session ends when the inspector closes its event stream. The
// recording replays to the inspector over SSE.
func TestRecordReplay_LegacySSE(t *testing.T) {
	t.Parallel()
	db, spy, u := recordEverythingHTTP(t, "sse.db", "sse", "/sse")
	call := mustInspect(t, urlArgs(u, "sse", callEcho)...)
	tape := interoptest.WaitEnded(t, db, 1) // the inspector's leaving ends it, not mcpspy's
	spy.Stop(t, 15*time.Second)

	s := tape.Sessions[0]
	rest, changed := shape(s.Messages)
	if d := cmp.Diff(slices.Concat([]string{"s2c endpoint"}, wantCallSession), rest); d != "" {
		t.Errorf("recorded (-want +got):\n%s", d)
	}
	if changed != 1 {
		t.Errorf("%d %s notifications, want the one sent after initialized", changed, listChanged)
	}
	checkHandshake(t, s, store.TransportLegacySSE)
	checkHAR(t, tape) // mcpspy export --har of a real legacy recording
	if ep := string(s.Messages[0].Frame); !strings.HasPrefix(ep, "/message?sessionId=") {
		t.Errorf("endpoint event %q", ep)
	}
	if e := s.Info.End; e.Reason != store.EndEOF {
		t.Errorf("end %+v, want eof", e)
	}
	if got := callText(t, []byte(call)); got != "text: Echo: hi" {
		t.Errorf("tools/call echo printed %q", got)
	}
	if t.Failed() {
		return
	}

	m := startMock(t, db)
	if got := mustInspect(t, urlArgs(m.base+"/sse", "sse", callEcho)...); got != call {
		t.Errorf("replay printed\n%s\nlive printed\n%s", got, call)
	}
	checkClean(t, m.finish(t), 4)
}
