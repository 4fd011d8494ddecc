package replay_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// A server that serves both eras may show each a surface of its own (the
// TypeScript SDK v2's server factories are told the era), and answers a
// 2026-07-28 client with what that version requires (resultType; ttlMs
// and cacheScope on lists), which the TypeScript SDK v2 client checks.
var (
	handshakeSession = []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`,
	}
	statelessSession = []string{
		`> {"jsonrpc":"2.0","id":0,"method":"tools/list","params":{` + statelessMeta + `}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"watch","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}`,
	}
)

// tapeOfSessions is tapeOf for several sessions, s1, s2, … in order.
func tapeOfSessions(tb testing.TB, sessions ...[]string) *store.Tape {
	tb.Helper()
	tape := &store.Tape{}
	for i, lines := range sessions {
		s := tapeOf(tb, lines...).Sessions[0]
		s.Info.ID = fmt.Sprintf("s%d", i+1)
		for _, m := range s.Messages {
			m.Session = s.Info.ID
		}
		tape.Sessions = append(tape.Sessions, s)
	}
	return tape
}

// A cassette that recorded a request in both eras (mcpspy records every
// session into one file, and the TypeScript SDK v2 client speaks either
// era as its caller asks) answers it from what was recorded in the live
// client's era, whichever came first: a 2026-07-28 client given the
// handshake-era answer refuses it (no resultType), and a handshake-era
// client given the other would see the other era's surface. The report
// counts the occurrence answered as used.
func TestReplay_MixedErasAnsweredInTheirEra(t *testing.T) {
	hello := handshakeSession[0][2:]
	tests := []struct {
		name      string
		sessions  [][]string
		stateless bool   // the live client speaks 2026-07-28
		want      string // the recorded answer's result
		unused    string // the recorded tools/list left unused
	}{
		{"handshake first, 2026-07-28 client", [][]string{handshakeSession, statelessSession}, true, statelessSession[1], "test.db s1#4 tools/list"},
		{"2026-07-28 first, 2026-07-28 client", [][]string{statelessSession, handshakeSession}, true, statelessSession[1], "test.db s2#4 tools/list"},
		{"handshake first, handshake-era client", [][]string{handshakeSession, statelessSession}, false, handshakeSession[4], "test.db s2#1 tools/list"},
		{"2026-07-28 first, handshake-era client", [][]string{statelessSession, handshakeSession}, false, handshakeSession[4], "test.db s1#1 tools/list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := replay.NewCassette("test.db", tapeOfSessions(t, tt.sessions...))
			if err != nil {
				t.Fatal(err)
			}
			s := mocktest.New(t, []replay.Source{c})
			lc := dial(t, s)
			params := `{` + statelessMeta + `}`
			if !tt.stateless {
				lc.roundTrip(hello)
				lc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				params = `{}`
			}
			got := lc.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":` + params + `}`)
			want := norm(t, `{"jsonrpc":"2.0","id":7,"result":`+resultOf(t, tt.want)+`}`)
			if got != want {
				t.Errorf("tools/list answered\n%s\nwant\n%s", got, want)
			}
			s.Close()
			r := s.Report()
			unused := slices.DeleteFunc(r.Unused, func(u string) bool { return u == "test.db s1#1 initialize" || u == "test.db s2#1 initialize" })
			if diff := cmp.Diff([]string{tt.unused}, unused); diff != "" || len(r.Unmatched) > 0 {
				t.Errorf("report: unmatched %+v; unused (-want +got):\n%s", r.Unmatched, diff)
			}
		})
	}
}

// resultOf is the result of a tape line holding a response.
func resultOf(tb testing.TB, line string) string {
	tb.Helper()
	var r struct{ Result json.RawMessage }
	if err := json.Unmarshal([]byte(line[2:]), &r); err != nil || r.Result == nil {
		tb.Fatalf("no result in %q: %v", line, err)
	}
	return string(r.Result)
}

// A request recorded in the handshake era alone, asked by a 2026-07-28
// client (here one that does not probe; the TypeScript SDK v2 client
// probes, and gets this far with a cassette that also holds a
// 2026-07-28 session): the answer goes with what 2026-07-28 requires of
// every result, resultType, and of a cacheable one, ttlMs and
// cacheScope, as a server that does not say how long its answer stays
// fresh; every recorded byte as it was. An error stays as recorded.
func TestReplay_HandshakeAnswerTo2026Client(t *testing.T) {
	tape := append(slices.Clone(handshakeSession),
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"boom","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no boom"}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"a://b"}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{ }}`,
	)
	s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)})
	lc := dial(t, s)
	ask := []string{
		`"method":"tools/list","params":{` + statelessMeta + `}`,
		`"method":"tools/call","params":{` + statelessMeta + `,"name":"echo","arguments":{"text":"hi"}}`,
		`"method":"tools/call","params":{` + statelessMeta + `,"name":"boom","arguments":{}}`,
		`"method":"resources/read","params":{` + statelessMeta + `,"uri":"a://b"}`,
	}
	want := []string{
		`{"jsonrpc":"2.0","id":10,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}`,
		`{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`,
		`{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"no boom"}}`,
		`{"jsonrpc":"2.0","id":13,"result":{ "resultType":"complete","ttlMs":0,"cacheScope":"private"}}`,
	}
	for i, a := range ask {
		lc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, 10+i, a))
		if got := lc.recv(); got != want[i] {
			t.Errorf("answer %d:\n%s\nwant\n%s", i, got, want[i])
		}
	}
}
