package mcpgo_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// liveRun is what one mcp-go client saw while mcpspy recorded it.
type liveRun struct {
	answers   transcript
	progress  []string
	sessionID string // the Mcp-Session-Id the client was given, if any
}

// recordStdio runs the scenario with an mcp-go client that starts
// `mcpspy record -- mcpgoserver` as its stdio server, and returns the
// cassette once mcpspy has exited.
func recordStdio(t *testing.T) (db string, live liveRun) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "stdio.db")
	c, ir, p := connect(t, transport.NewStdio(peertest.Binary(t, "mcpspy"), nil, "record", "-o", db, "--", mcpgoServer(t)))
	live.answers = scenario(t, c, ir, p, "tok-rec")
	// mcp-go's stdio server writes notifications from a goroutine of their
	// own, racing the answers: progress may follow the call's answer, but
	// all of it comes.
	live.progress = p.wait(t, 3)
	// Close ends mcpspy's stdin and waits for it to exit, cassette closed.
	// mcp-go waits only 2 s before it sends SIGTERM (go-sdk waits 5): on a
	// loaded machine a race-built mcpspy and server can take longer, so
	// Close's error is no verdict; the cassette's contents are.
	_ = c.Close()
	return db, live
}

// recordHTTP starts mcpgoserver's Streamable HTTP handler and mcpspy
// before it, runs the scenario with as many mcp-go clients as clients says,
// one after the other (each with its own connections), pinned to version ("" = mcp-go's
// default, server/discover first), and returns the cassette once mcpspy
// has exited.
func recordHTTP(t *testing.T, version string, clients int) (db string, live []liveRun) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "http.db")
	srv := peertest.Start(t, "", nil, nil, nil, mcpgoServer(t), "-http", "127.0.0.1:0")
	up := srv.WaitLine(t, "mcpgoserver: listening on ", 20*time.Second)
	spy := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpspy"), "record", "-o", db,
		"--listen", "127.0.0.1:0", "--upstream", strings.TrimSuffix(up, "/mcp"))
	url := spy.WaitLine(t, "mcpspy: listening on ", 20*time.Second) + "/mcp"
	var opts []client.ClientOption
	if version != "" {
		opts = append(opts, client.WithProtocolVersion(version))
	}
	for range clients {
		hc := &http.Client{Transport: &http.Transport{}}
		tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		c, ir, p := connect(t, tr, opts...)
		run := liveRun{answers: scenario(t, c, ir, p, "tok-rec"), sessionID: c.GetSessionId()}
		// Over HTTP the client has handled what came before the answer on
		// the call's event stream by the time the call returns.
		run.progress = p.wait(t, 0)
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		hc.CloseIdleConnections()
		live = append(live, run)
	}
	spy.Stop(t, 15*time.Second)
	return db, live
}

// wantAnswers is what the scenario answers, but for the first line.
var wantAnswers = transcript{"tools echo,progress", "call echo: hello", "call echo: again", "call progress: done 3 steps"}

// ownProgress is the progress the scenario's call asks for, as the client
// reports it.
var ownProgress = []string{"progress (own token) 1/3 step 1", "progress (own token) 2/3 step 2", "progress (own token) 3/3 step 3"}

// ownSteps says whether progress is ownProgress, or ownProgress less what
// mcp-go's HTTP server lost, in order.
func ownSteps(progress []string) bool {
	i := 0
	for _, p := range progress {
		for i < len(ownProgress) && ownProgress[i] != p {
			i++
		}
		if i == len(ownProgress) {
			return false
		}
		i++
	}
	return true
}

// The mcp-go client records through mcpspy into an mcp-go stdio server:
// the calls succeed, and the cassette holds every message once, in the
// order the client sent and the server answered, with the stateless-era
// handshake (server/discover) noted.
func TestRecord_Stdio(t *testing.T) {
	t.Parallel()
	db, live := recordStdio(t)
	if d := cmp.Diff(append(transcript{"server mcpgoserver 1.0.0, protocol 2026-07-28"}, wantAnswers...), live.answers); d != "" {
		t.Errorf("client saw (-want +got):\n%s", d)
	}
	if d := cmp.Diff(ownProgress, live.progress); d != "" {
		t.Errorf("client's progress (-want +got):\n%s", d)
	}
	tape := load(t, peertest.Binary(t, "mcpspy"), db)
	if len(tape.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(tape.Sessions))
	}
	s := tape.Sessions[0]
	checkPairs(t, s)
	rest, progress := shape(s.Messages)
	want := []string{
		"c2s request server/discover", "s2c response id=1",
		"c2s request tools/list", "s2c response id=2",
		"c2s request tools/call", "s2c response id=3",
		"c2s request tools/call", "s2c response id=4",
		"c2s request tools/call", "s2c response id=5",
	}
	if d := cmp.Diff(want, rest); d != "" {
		t.Errorf("recorded (-want +got):\n%s", d)
	}
	if len(progress) != 3 || !strings.HasPrefix(progress[0], `s2c {"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"step 1"`) {
		t.Errorf("recorded progress: %q", progress)
	}
	if before, after := progressAround(s.Messages, "tok-rec"); before+after != 3 {
		t.Errorf("progress for tok-rec: %d before the answer, %d after, want 3 in all", before, after)
	}
	// Unlike go-sdk, mcp-go spells out a tool's annotations with the spec's
	// defaults (destructive, open-world) when the tool sets none, and in
	// 2026-07-28 puts its serverInfo in every result's _meta.
	for _, m := range s.Messages {
		if sum := jsonrpc.Classify(m.Frame); sum.Kind == jsonrpc.Response &&
			!bytes.Contains(m.Frame, []byte(`"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgoserver","version":"1.0.0"}}`)) {
			t.Errorf("seq %d: result without serverInfo in its _meta: %s", m.Seq, m.Frame)
		}
	}
	if list := s.Messages[3].Frame; bytes.Count(list, []byte(`"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true}`)) != 2 {
		t.Errorf("tools/list answer without both tools' default annotations: %s", list)
	}
	h := s.Info.Handshake
	if s.Info.Transport != store.TransportStdio || h.Method != "server/discover" || h.ProtocolVersion != "2026-07-28" ||
		string(h.ClientInfo) != `{"name":"mcpgo-client","version":"0.1.0"}` ||
		string(h.ServerInfo) != `{"name":"mcpgoserver","version":"1.0.0"}` || !strings.Contains(string(h.Capabilities), `"tools"`) {
		t.Errorf("session info %+v, handshake %+v", s.Info, h)
	}
	if e := s.Info.End; e == nil || (e.Reason != store.EndEOF && e.Reason != store.EndSignal) {
		t.Errorf("end = %+v, want eof (or signal: mcp-go's SIGTERM, see recordStdio)", e)
	}
}

// The same over Streamable HTTP, in both eras mcp-go speaks: two clients
// one after the other through one mcpspy. In 2025-11-25 each gets an
// Mcp-Session-Id, and each id is one session, ended by the client's
// DELETE; in 2026-07-28 there are no sessions, and each client's
// connection is one.
func TestRecord_StreamableHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, version string
		handshake     []string
		wantSID       bool
		end           []string
	}{
		{name: "2026-07-28, default client", handshake: []string{"c2s request server/discover", "s2c response id=1"},
			// Nothing ends a session but the connection: the client closes
			// it, and mcpspy is stopped right after, so either may be seen.
			end: []string{store.EndEOF, store.EndSignal}},
		{name: "2025-11-25, pinned", version: "2025-11-25", wantSID: true, end: []string{store.EndClosed}, // the client's DELETE
			handshake: []string{"c2s request initialize", "s2c response id=1", "c2s notification notifications/initialized"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, live := recordHTTP(t, tt.version, 2)
			tape := load(t, peertest.Binary(t, "mcpspy"), db)
			if len(tape.Sessions) != 2 {
				t.Fatalf("%d sessions, want one per client", len(tape.Sessions))
			}
			wantVersion := tt.version
			if wantVersion == "" {
				wantVersion = "2026-07-28"
			}
			for i, s := range tape.Sessions {
				run := live[i]
				if d := cmp.Diff(append(transcript{"server mcpgoserver 1.0.0, protocol " + wantVersion}, wantAnswers...), run.answers); d != "" {
					t.Errorf("client %d saw (-want +got):\n%s", i, d)
				}
				checkPairs(t, s)
				rest, progress := shape(s.Messages)
				want := append(slices.Clone(tt.handshake),
					"c2s request tools/list", "s2c response id=2",
					"c2s request tools/call", "s2c response id=3",
					"c2s request tools/call", "s2c response id=4",
					"c2s request tools/call", "s2c response id=5")
				if d := cmp.Diff(want, rest); d != "" {
					t.Errorf("session %s recorded (-want +got):\n%s", s.Info.ID, d)
				}
				// mcp-go's Streamable HTTP server can lose one notification
				// sent during a call: its forwarder takes it off the queue,
				// then finds the answer written and drops it (with or without
				// mcpspy). What it did send comes before the answer, and the
				// client got exactly that.
				before, after := progressAround(s.Messages, "tok-rec")
				if before < 2 || after != 0 || len(progress) != before {
					t.Errorf("session %s: progress %d before the answer, %d after, %d in all; want 2 or 3, all before", s.Info.ID, before, after, len(progress))
				}
				if len(run.progress) != before || !ownSteps(run.progress) {
					t.Errorf("client %d got progress %q, cassette has %d", i, run.progress, before)
				}
				h := s.Info.Handshake
				if s.Info.Transport != store.TransportHTTP || h.ProtocolVersion != wantVersion ||
					string(h.ClientInfo) != `{"name":"mcpgo-client","version":"0.1.0"}` || string(h.ServerInfo) != `{"name":"mcpgoserver","version":"1.0.0"}` {
					t.Errorf("session %s info %+v, handshake %+v", s.Info.ID, s.Info, h)
				}
				if tt.wantSID != (run.sessionID != "") || s.Info.HTTPSessionID != run.sessionID {
					t.Errorf("session %s: recorded Mcp-Session-Id %q, client had %q", s.Info.ID, s.Info.HTTPSessionID, run.sessionID)
				}
				if e := s.Info.End; e == nil || !slices.Contains(tt.end, e.Reason) {
					t.Errorf("session %s: end = %+v, want %s", s.Info.ID, e, tt.end)
				}
			}
			if tt.wantSID && live[0].sessionID == live[1].sessionID {
				t.Errorf("both clients had session %q", live[0].sessionID)
			}
		})
	}
}
