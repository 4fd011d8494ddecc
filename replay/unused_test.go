package replay_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// TestCassette_UnusedInitialize: a cassette of two sessions (one recorded
// by mcpspy, one the fallback added) replayed in one client session leaves
// the second initialize unused, and that is no miss; a call it never made
// is.
func TestCassette_UnusedInitialize(t *testing.T) {
	one := tapeOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	two := tapeOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	two.Sessions[0].Info.ID = "s2"
	one.Sessions = append(one.Sessions, two.Sessions...)
	c, err := replay.NewCassette("grown.db", one)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Unused(); len(got) != 4 {
		t.Errorf("before any client: unused %q, want all four requests", got)
	}
	s := mocktest.New(t, []replay.Source{c})
	cl := dial(t, s)
	cl.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	cl.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`)
	got := strings.Join(c.Unused(), "\n")
	if want := `grown.db s1#3 tools/call {"name":"a"}`; got != want {
		t.Errorf("unused:\n%s\nwant:\n%s", got, want)
	}
}

// A cassette pooling sessions that asked the same: each live session
// gets the answers from the first recorded occurrence on, but the report
// counts every live request against the recorded ones, so clients that
// asked exactly what was recorded leave nothing unused, and one that asked
// less leaves the rest.
func TestCassette_UnusedPooledSessions(t *testing.T) {
	session := func(id string) []string {
		return []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"` + id + `"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
		}
	}
	pooled := func(t *testing.T) *replay.Cassette {
		one, two, three := tapeOf(t, session("one")...), tapeOf(t, session("two")...), tapeOf(t, session("three")...)
		two.Sessions[0].Info.ID, three.Sessions[0].Info.ID = "s2", "s3"
		one.Sessions = append(one.Sessions, two.Sessions[0], three.Sessions[0])
		c, err := replay.NewCassette("pool.db", one)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name    string
		match   string
		clients [][]string // each client's requests, one live session each
		want    []string   // unused
		answers []string   // each client's tools/list answer, in order
	}{
		{
			name: "three clients, each as recorded",
			clients: [][]string{
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`},
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`},
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`},
			},
			answers: []string{"one", "one", "one"},
		},
		{
			name: "two clients: the third session's requests are left",
			clients: [][]string{
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`},
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			},
			want:    []string{`pool.db s2#3 logging/setLevel {"level":"debug"}`, `pool.db s3#1 tools/list`, `pool.db s3#3 logging/setLevel {"level":"debug"}`},
			answers: []string{"one", "one"},
		},
		{
			name: "one client asking three times uses up all three",
			clients: [][]string{
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`},
			},
			want:    []string{`pool.db s1#3 logging/setLevel {"level":"debug"}`, `pool.db s2#3 logging/setLevel {"level":"debug"}`, `pool.db s3#3 logging/setLevel {"level":"debug"}`},
			answers: []string{"one", "two", "three", "three"},
		},
		{
			name:  "ignore-params: counted per method over all sessions",
			match: "ignore-params",
			clients: [][]string{
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}`, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`},
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			},
			want:    []string{`pool.db s2#3 logging/setLevel {"level":"debug"}`, `pool.db s3#1 tools/list`, `pool.db s3#3 logging/setLevel {"level":"debug"}`},
			answers: []string{"one", "one"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pooled(t)
			s := mocktest.New(t, []replay.Source{c}, mocktest.WithMatch(tt.match))
			var answers []string
			for _, reqs := range tt.clients {
				cl := dial(t, s)
				for _, r := range reqs {
					got := cl.roundTrip(r)
					if strings.Contains(r, "tools/list") {
						_, name, _ := strings.Cut(got, `"name":"`)
						name, _, _ = strings.Cut(name, `"`)
						answers = append(answers, name)
					}
				}
			}
			if strings.Join(answers, " ") != strings.Join(tt.answers, " ") {
				t.Errorf("tools/list answered %q, want %q", answers, tt.answers)
			}
			if got := c.Unused(); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("unused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// A recorded request only a client of the other protocol era sends is
// not unused when every live session spoke one era: a handshake-era
// client never sends subscriptions/listen, a 2026-07-28 one never sends
// initialize, logging/setLevel or resources/subscribe. The report says
// what it left out and why. With both eras live, or a request of the
// live era, nothing is left out.
func TestReport_OtherEraNotUnused(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	stateless := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true}}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`,
	}
	handshake := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{},"resources":{"subscribe":true}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///a"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"tools":[]}}`,
	}
	const (
		hello   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`
		listOld = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		listNew = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`
	)
	fromNew := func(m string) string {
		return "only a 2026-07-28 client sends " + m + ", and every live session spoke the handshake era"
	}
	fromOld := func(m string) string {
		return "a 2026-07-28 client does not send " + m + ", and every live session spoke 2026-07-28"
	}
	tests := []struct {
		name    string
		tape    []string
		clients [][]string // each client's requests, one live session each
		unused  []string
		leftOut []replay.LeftOut
	}{
		{
			name:    "a 2026-07-28 recording, a handshake-era client",
			tape:    stateless,
			clients: [][]string{{hello, listOld}},
			leftOut: []replay.LeftOut{
				{Request: `test.db s1#1 server/discover`, Why: fromNew("server/discover")},
				{Request: `test.db s1#3 subscriptions/listen {"notifications":{"toolsListChanged":true}}`, Why: fromNew("subscriptions/listen")},
			},
		},
		{
			// The spec lets a 2026-07-28 client version each request
			// instead of discovering.
			name:    "a 2026-07-28 recording, a 2026-07-28 client that does not discover",
			tape:    stateless,
			clients: [][]string{{listNew}},
			unused:  []string{`test.db s1#3 subscriptions/listen {"notifications":{"toolsListChanged":true}}`},
		},
		{
			name:    "a handshake-era recording, a 2026-07-28 client",
			tape:    handshake,
			clients: [][]string{{listNew}},
			leftOut: []replay.LeftOut{
				{Request: `test.db s1#1 initialize`, Why: fromOld("initialize")},
				{Request: `test.db s1#4 logging/setLevel {"level":"info"}`, Why: fromOld("logging/setLevel")},
				{Request: `test.db s1#6 resources/subscribe {"uri":"file:///a"}`, Why: fromOld("resources/subscribe")},
			},
		},
		{
			name:    "a 2026-07-28 recording, clients of both eras",
			tape:    stateless,
			clients: [][]string{{hello, listOld}, {listNew}},
			unused:  []string{`test.db s1#3 subscriptions/listen {"notifications":{"toolsListChanged":true}}`},
		},
		{
			name:    "a handshake-era recording, a handshake-era client that sets no level",
			tape:    handshake,
			clients: [][]string{{hello, listOld}},
			unused:  []string{`test.db s1#4 logging/setLevel {"level":"info"}`, `test.db s1#6 resources/subscribe {"uri":"file:///a"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tt.tape...)})
			for _, reqs := range tt.clients {
				cl := dial(t, s)
				for _, r := range reqs {
					if got := cl.roundTrip(r); !strings.Contains(got, `"result"`) {
						t.Fatalf("%s answered %s", r, got)
					}
				}
			}
			r := s.Report()
			if diff := cmp.Diff(tt.unused, r.Unused, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unused (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.leftOut, r.LeftOut); diff != "" {
				t.Errorf("left out (-want +got):\n%s", diff)
			}
			if r.Clean() != (len(tt.unused) == 0) {
				t.Errorf("Clean() = %v with unused %q", r.Clean(), r.Unused)
			}
		})
	}
}

// TestReplay_HandshakeClientOnStatelessRecordingStrict replays a go-sdk ↔
// go-sdk recording of 2026-07-28, which holds the client's
// subscriptions/listen, to go-sdk's client speaking 2025-11-25, with
// --strict: that client can never send subscriptions/listen, so the
// report leaves it out of unused, saying why, and --strict passes.
func TestReplay_HandshakeClientOnStatelessRecordingStrict(t *testing.T) {
	db, _ := recordGo(t, "stdio", "")
	mock := peertest.Binary(t, "mcpmock")
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(mock, "serve", "--strict", "--report", report, db)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	goScenario(t, &mcp.CommandTransport{Command: cmd}, "2025-11-25", "tok-replay")
	r := pollReport(t, report)
	if len(r.Unmatched) != 0 || len(r.Unused) != 0 {
		t.Errorf("report: unmatched %+v, unused %q; want neither\nmcpmock's stderr:\n%s", r.Unmatched, r.Unused, stderr.String())
	}
	var left []string
	for _, l := range r.LeftOut {
		_, what, _ := strings.Cut(l.Request, "#")
		left = append(left, what+": "+l.Why)
	}
	want := []string{
		"1 server/discover: only a 2026-07-28 client sends server/discover, and every live session spoke the handshake era",
		`3 subscriptions/listen {"notifications":{"toolsListChanged":true}}: only a 2026-07-28 client sends subscriptions/listen, and every live session spoke the handshake era`,
	}
	if d := cmp.Diff(want, left); d != "" {
		t.Errorf("report's left_out (-want +got):\n%s", d)
	}
	// The client's Close waited for mcpmock to exit.
	if ps := cmd.ProcessState; ps == nil || ps.ExitCode() != 0 {
		t.Errorf("mcpmock --strict ended %v; want exit status 0\n%s", ps, stderr.String())
	}
}
