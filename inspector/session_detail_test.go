package inspector

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// webInfo is a Streamable HTTP session whose GET stream carried only
// priming events, so the recorder kept them in the session info.
var webInfo = store.SessionInfo{
	ID: "s2", Name: "web", Transport: store.TransportHTTP, Upstream: "http://127.0.0.1:9/mcp",
	HTTPSessionID: "abc123",
	Priming: []store.StreamPriming{
		{Stream: "get-sse", StreamID: 3, Path: "/mcp", EventIDs: []string{"0", "1"}, Retry: "3000"},
	},
}

// noSessionID is the line of a Streamable HTTP session without an
// Mcp-Session-Id.
const noSessionID = "mcp-session-id: none: this session is one client connection's traffic"

// noEnd is the end line of a session with no end that no live process
// records.
const noEnd = "end: " + store.StateNoEnd

func TestSessionDetail(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	stdio := store.SessionInfo{ID: "s1", Transport: store.TransportStdio, Upstream: "server --flag"}
	prime := func(ps ...store.StreamPriming) store.SessionInfo {
		info := store.SessionInfo{ID: "s3", Transport: store.TransportHTTP}
		info.Priming = ps
		return info
	}
	tests := []struct {
		name     string
		sessions []store.SessionInfo
		sess     int
		want     []string
	}{
		{name: "no priming", sessions: []store.SessionInfo{stdio}, want: []string{
			"session s1  stdio",
			"upstream: server --flag",
			noEnd,
		}},
		{name: "stream, path, ids and retry", sessions: []store.SessionInfo{webInfo}, want: []string{
			"session s2 web  streamable-http",
			"upstream: http://127.0.0.1:9/mcp",
			"mcp-session-id: abc123",
			noEnd,
			"priming: get-sse#3 /mcp · ids 0, 1 · retry 3000",
		}},
		{name: "one line per stream, absent fields left out", sessions: []store.SessionInfo{prime(
			store.StreamPriming{Stream: "get-sse", EventIDs: []string{"a"}},
			store.StreamPriming{Stream: "post-sse", StreamID: 7, Path: "/mcp?x=1", EventIDs: []string{"b"}},
		)}, want: []string{
			"session s3  streamable-http",
			noSessionID,
			noEnd,
			"priming: get-sse · ids a",
			"priming: post-sse#7 /mcp?x=1 · ids b",
		}},
		{name: "ids that would be ambiguous are quoted", sessions: []store.SessionInfo{prime(
			store.StreamPriming{Stream: "get-sse", EventIDs: []string{"", "a b", "x,y", `q"`, "tab\t", "ok"}},
		)}, want: []string{
			"session s3  streamable-http",
			noSessionID,
			noEnd,
			`priming: get-sse · ids "", "a b", "x,y", "q\"", "tab\t", ok`,
		}},
		{name: "a long id list keeps its ends and count", sessions: []store.SessionInfo{prime(
			store.StreamPriming{Stream: "get-sse", EventIDs: strings.Fields("0 1 2 3 4 5 6 7 8 9")},
		)}, want: []string{
			"session s3  streamable-http",
			noSessionID,
			noEnd,
			"priming: get-sse · ids 0, 1, 2, …, 8, 9 (10)",
		}},
		{name: "all shows every session", sessions: []store.SessionInfo{stdio, webInfo}, sess: -1, want: []string{
			"session s1  stdio",
			"upstream: server --flag",
			noEnd,
			"",
			"session s2 web  streamable-http",
			"upstream: http://127.0.0.1:9/mcp",
			"mcp-session-id: abc123",
			noEnd,
			"priming: get-sse#3 /mcp · ids 0, 1 · retry 3000",
		}},
		{name: "no such session", sessions: []store.SessionInfo{stdio}, sess: 1},
		{name: "start, end, handshake and recorder", sessions: []store.SessionInfo{{
			ID: "s4", Transport: store.TransportStdio, Upstream: "srv",
			Start: t0, End: &store.EndInfo{Reason: store.EndExit, ExitCode: new(2), Time: t0.Add(1500 * time.Millisecond), Error: "broken pipe"},
			Handshake: store.Handshake{Method: "initialize", ProtocolVersion: "2025-11-25",
				ClientInfo: []byte(`{"name":"host","version":"1.0.0"}`), ServerInfo: []byte(`{"title":"no name"}`),
				Capabilities: []byte(`{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":false},"logging":{},"experimental":{"x":{}}}`)},
			Recorder: "mcpspy dev",
		}}, want: []string{
			"session s4  stdio",
			"upstream: srv",
			"start: " + t0.Local().Format("2006-01-02 15:04:05.000"),
			"end: exit(2) at " + t0.Add(1500*time.Millisecond).Local().Format("2006-01-02 15:04:05.000") + " · broken pipe",
			`handshake: initialize 2025-11-25 · client host 1.0.0 · server {"title":"no name"}`,
			"capabilities: experimental · logging · resources(subscribe) · tools(listChanged)",
			"recorder: mcpspy dev",
		}},
		{name: "HTTP requests that carried no message either way", sessions: []store.SessionInfo{{
			ID: "s6", Transport: store.TransportHTTP,
			Bare: []store.BareExchange{
				{Time: t0, HTTP: store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 405}},
				{HTTP: store.HTTPMeta{Method: "DELETE", Path: "/mcp", Status: 200}, Note: "its event stream ended without a message"},
			},
			BareOmitted: 3,
		}}, want: []string{
			"session s6  streamable-http",
			noSessionID,
			noEnd,
			"no message: GET /mcp → 405 · at " + t0.Local().Format("2006-01-02 15:04:05.000"),
			"no message: DELETE /mcp → 200 · its event stream ended without a message",
			"no message: 3 more not kept",
		}},
		{name: "a WebSocket's close code", sessions: []store.SessionInfo{{
			ID: "s5", Transport: store.TransportWebSocket, End: &store.EndInfo{Reason: store.EndClosed, CloseCode: 1000},
		}}, want: []string{
			"session s5  websocket",
			"end: closed(1000)",
		}},
		{name: "no end, and the process recording it runs", sessions: []store.SessionInfo{{
			ID: "s7", Transport: store.TransportStdio, RecorderProcess: &store.RecorderProcess{PID: os.Getpid(), Host: host},
		}}, want: []string{
			"session s7  stdio",
			"end: recording (recorder pid " + strconv.Itoa(os.Getpid()) + " on " + host + ")",
		}},
		{name: "no end, and the process recording it cannot be found", sessions: []store.SessionInfo{{
			ID: "s8", Transport: store.TransportStdio, RecorderProcess: &store.RecorderProcess{PID: os.Getpid(), Host: "elsewhere.invalid"},
		}}, want: []string{
			"session s8  stdio",
			"end: no end recorded (recorder pid " + strconv.Itoa(os.Getpid()) + " on elsewhere.invalid)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ss []Session
			for _, info := range tt.sessions {
				ss = append(ss, Session{Info: info})
			}
			var got []string
			for _, l := range SessionDetail(ss, tt.sess) {
				got = append(got, l.String())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("SessionDetail (-want +got):\n%s", d)
			}
		})
	}
}

// primingCassette holds sampleSession as s1 and webInfo, with no
// messages, as s2.
func primingCassette(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "test.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "server", Start: t0})
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range sampleSession {
		s.Append(f.dir, t0.Add(f.at), []byte(f.json), nil)
	}
	info := webInfo
	info.Start = t0.Add(time.Second)
	web, err := w.NewSession(info)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range []*store.Session{s, web} {
		if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: t0.Add(2 * time.Second)}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestView_SessionDetail(t *testing.T) {
	const priming = "priming: get-sse#3 /mcp · ids 0, 1 · retry 3000"
	tests := []struct {
		name  string
		steps []keyStep
	}{
		{name: "sessions pane focus shows all sessions", steps: []keyStep{
			{key: tcell.KeyBacktab, want: []string{"session s1  stdio", "session s2 web  streamable-http", priming, "end: eof at "}},
		}},
		{name: "a session with only priming shows it", steps: []keyStep{
			{key: tcell.KeyBacktab}, {keys: "jj", want: []string{"0/13", "mcp-session-id: abc123", priming}},
		}},
		{name: "a session without priming", steps: []keyStep{
			{key: tcell.KeyBacktab}, {keys: "j", want: []string{"13/13", "session s1  stdio"}, notWant: []string{priming}},
		}},
		{name: "the table takes the detail back", steps: []keyStep{
			{key: tcell.KeyBacktab, want: []string{priming}},
			{key: tcell.KeyTab, want: []string{"s1 #1  →  request"}, notWant: []string{priming}},
		}},
		{name: "the detail pane keeps the session to scroll it", steps: []keyStep{
			{key: tcell.KeyBacktab, want: []string{priming}},
			{key: tcell.KeyBacktab, want: []string{priming}},
			{key: tcell.KeyEnter, want: []string{priming}, notWant: []string{"method / tool"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src := openModel(t, primingCassette(t))
			// Tall enough for both sessions' details in the "all" view.
			h := startApp(t, m, src, Options{}, 80, 40)
			h.waitFor(wait, []string{"s1 #1  →  request"}, priming)
			h.play(wait, tt.steps)
		})
	}
}

// TestView_SessionDetailFollow: a recorder keeps priming in the session
// info when the stream ends, after the session first showed; the detail
// pane picks it up on the next poll.
func TestView_SessionDetailFollow(t *testing.T) {
	path := writeCassette(t, sampleSession)
	m, src := openModel(t, path)
	h := startApp(t, m, src, Options{Follow: true}, 80, 24)
	h.waitFor(wait, []string{"13/13", "● follow"})

	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportHTTP, Upstream: "http://live/mcp", Start: time.Now()})
	h.key(tcell.KeyBacktab)
	h.waitFor(wait, []string{"upstream: http://live/mcp"})
	h.keys("jj")
	h.waitFor(wait, []string{"0/13", "session s2  streamable-http"})

	s.Update(func(info *store.SessionInfo) {
		info.Priming = append(info.Priming, store.StreamPriming{Stream: "get-sse", StreamID: 1, Path: "/mcp", EventIDs: []string{"7"}})
	})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h.waitFor(wait, []string{"session s2  streamable-http", "priming: get-sse#1 /mcp · ids 7"})
}
