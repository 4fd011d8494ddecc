package replay_test

import (
	"strings"
	"testing"

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
