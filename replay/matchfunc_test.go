package replay_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// stampCall is a tools/call of tool "stamp", whose argument "at" the host
// makes up afresh each run; meta goes into params as it is ("" for none).
func stampCall(id, at, meta string) string {
	if meta != "" {
		meta += ","
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta + `"name":"stamp","arguments":{"at":"` + at + `","text":"hi"}}}`
}

// stampAnswer is a recorded answer with text; extra goes into the result.
func stampAnswer(id, text, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{` + extra + `"content":[{"type":"text","text":"` + text + `"}]}}`
}

// withoutAt says whether live and recorded differ at most in
// arguments.at: a matcher as a user writes one.
func withoutAt(live, recorded replay.MatchRequest) bool {
	var l, r map[string]any
	if json.Unmarshal(live.Params, &l) != nil || json.Unmarshal(recorded.Params, &r) != nil {
		return false
	}
	for _, p := range []map[string]any{l, r} {
		if args, ok := p["arguments"].(map[string]any); ok {
			delete(args, "at")
		}
	}
	return live.Method == recorded.Method && reflect.DeepEqual(l, r)
}

// answerText is the text of a normalised answer's first content block,
// or "error: MESSAGE".
func answerText(tb testing.TB, msg string) string {
	tb.Helper()
	var m struct {
		Result *struct {
			Content []struct{ Text string }
		}
		Error *struct{ Message string }
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		tb.Fatalf("answer %s: %v", msg, err)
	}
	switch {
	case m.Error != nil:
		return "error: " + m.Error.Message
	case m.Result != nil && len(m.Result.Content) > 0:
		return m.Result.Content[0].Text
	}
	return "no text in " + msg
}

// The MatchFunc semantics: asked only after the normal match missed,
// over the recorded requests of the method in recorded order, the unused
// first; what it takes is used, as a normal match's is.
func TestMatchFunc_Semantics(t *testing.T) {
	hello := handshakeSession[:3]
	twoStamps := append(slices.Clone(hello),
		`> `+stampCall("1", "T1", ""), `< `+stampAnswer("1", "one", ""),
		`> `+stampCall("2", "T2", ""), `< `+stampAnswer("2", "two", ""),
	)
	// The same call twice: a key recorded more than once.
	sameTwice := append(slices.Clone(hello),
		`> `+stampCall("1", "T1", ""), `< `+stampAnswer("1", "one", ""),
		`> `+stampCall("2", "T1", ""), `< `+stampAnswer("2", "two", ""),
	)
	type step struct{ send, want string }
	tests := []struct {
		name      string
		sessions  [][]string
		mode      string // --match
		fn        func(live, recorded replay.MatchRequest) bool
		handshake bool // the live client initializes first
		steps     []step
		wantCalls int32    // how often fn was asked
		unused    []string // besides initialize
		unmatched int
	}{
		{
			name: "an exact match does not ask it", sessions: [][]string{twoStamps}, fn: withoutAt, handshake: true,
			steps: []step{{stampCall("7", "T2", ""), "two"}, {stampCall("8", "T1", ""), "one"}},
		},
		{
			name: "a miss asks it, repeats in recorded order, then the last again", sessions: [][]string{twoStamps}, fn: withoutAt, handshake: true,
			steps: []step{{stampCall("7", "X", ""), "one"}, {stampCall("8", "Y", ""), "two"}, {stampCall("9", "Z", ""), "two"}},
			// X: one (asked about T1). Y: T1 is used; two. Z: both used,
			// so from the last: T2.
			wantCalls: 1 + 1 + 1,
		},
		{
			name: "what it took counts as used, for the normal match too", sessions: [][]string{sameTwice}, fn: withoutAt, handshake: true,
			// X takes the first T1; the exact T1 after it gets the
			// second, not the first again.
			steps:     []step{{stampCall("7", "X", ""), "one"}, {stampCall("8", "T1", ""), "two"}},
			wantCalls: 1,
		},
		{
			name: "it may pass over recorded requests", sessions: [][]string{twoStamps}, handshake: true,
			fn: func(_, recorded replay.MatchRequest) bool {
				return strings.Contains(string(recorded.Params), `"T2"`)
			},
			steps:     []step{{stampCall("7", "X", ""), "two"}},
			wantCalls: 2, unused: []string{`test.db s1#4 tools/call {"arguments":{"at":"T1","text":"hi"},"name":"stamp"}`},
		},
		{
			name: "refused: unmatched, with the nearest recorded request", sessions: [][]string{twoStamps}, handshake: true,
			fn: func(_, _ replay.MatchRequest) bool { return false },
			steps: []step{{stampCall("7", "X", ""), `error: mcpmock: no recorded answer for tools/call; nearest recorded request: test.db s1#4 tools/call {"arguments":{"at":"T1","text":"hi"},"name":"stamp"}` + "\n" +
				`- params.arguments.at="T1"` + "\n" + `+ params.arguments.at="X"`}},
			// Unused (two each) then used again, from the last (two).
			wantCalls: 4, unmatched: 1,
			unused: []string{`test.db s1#4 tools/call {"arguments":{"at":"T1","text":"hi"},"name":"stamp"}`, `test.db s1#6 tools/call {"arguments":{"at":"T2","text":"hi"},"name":"stamp"}`},
		},
		{
			name: "strict: only the request expected next", sessions: [][]string{twoStamps}, mode: "strict", fn: withoutAt, handshake: true,
			steps:     []step{{stampCall("7", "X", ""), "one"}, {stampCall("8", "Y", ""), "two"}},
			wantCalls: 2,
		},
		{
			name: "a method recorded in both eras: the live request's era, handshake", handshake: true, fn: withoutAt,
			sessions: [][]string{
				{`> ` + stampCall("0", "T0", statelessMeta), `< ` + stampAnswer("0", "stateless", `"resultType":"complete",`)},
				append(slices.Clone(hello), `> `+stampCall("1", "T1", ""), `< `+stampAnswer("1", "handshake", "")),
			},
			steps:     []step{{stampCall("7", "X", ""), "handshake"}},
			wantCalls: 1, unused: []string{`test.db s1#1 tools/call {"arguments":{"at":"T0","text":"hi"},"name":"stamp"}`},
		},
		{
			name: "a method recorded in both eras: the live request's era, 2026-07-28", fn: withoutAt,
			sessions: [][]string{
				append(slices.Clone(hello), `> `+stampCall("1", "T1", ""), `< `+stampAnswer("1", "handshake", "")),
				{`> ` + stampCall("0", "T0", statelessMeta), `< ` + stampAnswer("0", "stateless", `"resultType":"complete",`)},
			},
			steps:     []step{{stampCall("7", "X", statelessMeta), "stateless"}},
			wantCalls: 1, unused: []string{`test.db s1#4 tools/call {"arguments":{"at":"T1","text":"hi"},"name":"stamp"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := replay.NewCassette("test.db", tapeOfSessions(t, tt.sessions...))
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			fn := func(live, recorded replay.MatchRequest) bool {
				calls.Add(1)
				return tt.fn(live, recorded)
			}
			s := mocktest.New(t, []replay.Source{c}, mocktest.WithMatch(tt.mode), mocktest.WithMatcher(fn))
			lc := dial(t, s)
			if tt.handshake {
				lc.roundTrip(hello[0][2:])
				lc.send(hello[2][2:])
			}
			for _, st := range tt.steps {
				if got := answerText(t, lc.roundTrip(st.send)); got != st.want {
					t.Errorf("sent %s\n got  %s\n want %s", st.send, got, st.want)
				}
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("MatchFunc asked %d times, want %d", got, tt.wantCalls)
			}
			s.Close()
			r := s.Report()
			unused := slices.DeleteFunc(r.Unused, func(u string) bool { return strings.Contains(u, " initialize ") })
			if diff := cmp.Diff(tt.unused, unused, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unused (-want +got):\n%s", diff)
			}
			if len(r.Unmatched) != tt.unmatched || r.Matched != len(tt.steps)+btoi(tt.handshake)-tt.unmatched {
				t.Errorf("report: matched %d, unmatched %+v", r.Matched, r.Unmatched)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A MatchFunc that panics does not take the server down: the request is
// unmatched, a warning names the panic, and the next request is answered.
func TestMatchFunc_Panic(t *testing.T) {
	tape := append(slices.Clone(handshakeSession[:3]), `> `+stampCall("1", "T1", ""), `< `+stampAnswer("1", "one", ""))
	s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)}, mocktest.WithMatcher(func(_, _ replay.MatchRequest) bool {
		panic("matcher bug")
	}))
	lc := dial(t, s)
	lc.roundTrip(tape[0][2:])
	lc.send(tape[2][2:])
	got := answerText(t, lc.roundTrip(stampCall("7", "X", "")))
	if !strings.HasPrefix(got, "error: mcpmock: no recorded answer for tools/call; nearest recorded request: test.db s1#4") {
		t.Errorf("after a panic: got %s, want the unmatched error", got)
	}
	if got := answerText(t, lc.roundTrip(stampCall("8", "T1", ""))); got != "one" {
		t.Errorf("after the panic, the exact request got %s, want one", got)
	}
	want := `mcpmock: MatchFunc panicked on live tools/call {"arguments":{"at":"X","text":"hi"},"name":"stamp"} against recorded test.db s1#4: matcher bug; the request is unmatched`
	if !strings.Contains(s.Warnings(), want) {
		t.Errorf("no warning naming the panic; log:\n%s", s.Warnings())
	}
	if r := s.Report(); len(r.Unmatched) != 1 {
		t.Errorf("unmatched %+v, want the request the func panicked on", r.Unmatched)
	}
}

// The func sees both sides in canonical form: keys sorted, volatile
// members out, ignored members blanked, absent params as {}.
func TestMatchFunc_SeesCanonicalParams(t *testing.T) {
	tape := append(slices.Clone(handshakeSession[:3]),
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stamp","arguments":{"text":"hi","at":"T1","rid":"r1"}}}`, `< `+stampAnswer("1", "one", ""),
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	)
	c, err := replay.NewCassette("test.db", tapeOf(t, tape...), replay.Ignore("rid"))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	s := mocktest.New(t, []replay.Source{c}, mocktest.WithMatcher(func(live, recorded replay.MatchRequest) bool {
		seen = append(seen, live.Method+" "+string(live.Params), recorded.Method+" "+string(recorded.Params))
		return false
	}))
	lc := dial(t, s)
	lc.roundTrip(tape[0][2:])
	lc.send(tape[2][2:])
	lc.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":3},"arguments":{"rid":"r9", "at":"X","text":"hi"},"name":"stamp"}}`)
	lc.roundTrip(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"c"}}`)
	want := []string{
		// asked about it as unused, then as the last recorded
		`tools/call {"arguments":{"at":"X","rid":"(ignored)","text":"hi"},"name":"stamp"}`, `tools/call {"arguments":{"at":"T1","rid":"(ignored)","text":"hi"},"name":"stamp"}`,
		`tools/call {"arguments":{"at":"X","rid":"(ignored)","text":"hi"},"name":"stamp"}`, `tools/call {"arguments":{"at":"T1","rid":"(ignored)","text":"hi"},"name":"stamp"}`,
		`tools/list {"cursor":"c"}`, `tools/list {}`,
		`tools/list {"cursor":"c"}`, `tools/list {}`,
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("what the func saw (-want +got):\n%s", diff)
	}
}

// What the func took counts among the uses of its key over all live
// sessions, as identical requests do: two recorded sessions asked the
// same call; one live session asks it with another time (the func takes
// the first), another exactly: both recorded calls are used.
func TestMatchFunc_CountsAcrossSessions(t *testing.T) {
	session := append(slices.Clone(handshakeSession[:3]), `> `+stampCall("1", "T1", ""), `< `+stampAnswer("1", "one", ""))
	c, err := replay.NewCassette("test.db", tapeOfSessions(t, session, session))
	if err != nil {
		t.Fatal(err)
	}
	s := mocktest.New(t, []replay.Source{c}, mocktest.WithMatcher(withoutAt))
	for _, at := range []string{"X", "T1"} {
		lc := dial(t, s)
		lc.roundTrip(session[0][2:])
		lc.send(session[2][2:])
		if got := answerText(t, lc.roundTrip(stampCall("7", at, ""))); got != "one" {
			t.Errorf("at %s: got %s, want one", at, got)
		}
	}
	s.Close()
	if r := s.Report(); len(r.Unused) != 0 || len(r.Unmatched) != 0 {
		t.Errorf("unused %q, unmatched %+v: want none", r.Unused, r.Unmatched)
	}
}
