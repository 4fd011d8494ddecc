package inspector

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

func visibleSeqs(m *Model) []string {
	var out []string
	for i := 0; i < m.Visible(); i++ {
		r, _ := m.Row(i)
		out = append(out, fmt.Sprintf("%s:%d", r.Session, r.Seq))
	}
	return out
}

// filtered applies the filter expr and returns the visible messages.
func filtered(t *testing.T, m *Model, src Source, expr string) []string {
	t.Helper()
	f, err := ParseFilter(expr)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	return visibleSeqs(m)
}

func TestModel_Pairing(t *testing.T) {
	m, _ := openModel(t, writeCassette(t, sampleSession))
	tests := []struct {
		name    string
		seq     uint64
		pair    uint64 // 0: none
		latency time.Duration
		method  string
	}{
		{"initialize request", 1, 2, 2 * time.Millisecond, "initialize"},
		{"initialize response takes the method", 2, 1, 2 * time.Millisecond, "initialize"},
		{"notification has no pair", 3, 0, 0, "notifications/initialized"},
		{"number id 2 pairs with number id 2 from the server", 4, 9, 5 * time.Millisecond, "tools/call"},
		{"string id \"2\" is a different request", 5, 10, 300 * time.Millisecond, "tools/call"},
		{"server→client id 2 has its own id space", 7, 8, time.Millisecond, "roots/list"},
		{"client's reply to roots/list", 8, 7, time.Millisecond, "roots/list"},
		{"error response pairs", 12, 11, time.Millisecond, "resources/read"},
		{"malformed has no pair", 13, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := m.ByIndex(int(tt.seq - 1))
			if !ok {
				t.Fatalf("no row %d", tt.seq)
			}
			var pair uint64
			if p, ok := m.ByIndex(r.Pair); ok {
				pair = p.Seq
			}
			if pair != tt.pair || r.Latency != tt.latency || r.Method != tt.method {
				t.Errorf("seq %d: pair %d latency %v method %q; want %d %v %q", tt.seq, pair, r.Latency, r.Method, tt.pair, tt.latency, tt.method)
			}
		})
	}
}

func TestModel_Filter(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession, sampleSession[:3]))
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"empty shows all in time order", "", nil},
		{"method with its responses", "method:initialize", []string{"s1:1", "s1:2", "s2:1", "s2:2"}},
		{"method glob", "method:notifications/* session:s1", []string{"s1:3", "s1:6"}},
		{"method glob with a star each side", "method:*s/c* session:s1", []string{"s1:4", "s1:5", "s1:9", "s1:10"}},
		{"tool includes the response", "tool:echo", []string{"s1:4", "s1:9"}},
		{"alternatives", "tool:echo|slow-op kind:response", []string{"s1:9", "s1:10"}},
		{"dir and kind", "dir:c2s kind:response", []string{"s1:8"}},
		{"kind as the table writes it", "dir:c2s kind:resp", []string{"s1:8"}},
		{"kinds as the table writes them", "session:s1 kind:req|notif|bad dir:s2c", []string{"s1:6", "s1:7", "s1:13"}},
		{"number id", "id:2 session:s1", []string{"s1:4", "s1:7", "s1:8", "s1:9"}},
		{"string id", `id:"2"`, []string{"s1:5", "s1:10"}},
		{"bare word id means a string id", `id:abc`, nil},
		{"error covers JSON-RPC errors and isError", "error", []string{"s1:10", "s1:12"}},
		{"not", "session:s1 !kind:request !kind:response !kind:notification", []string{"s1:12", "s1:13"}},
		{"slow", "slow:>100ms", []string{"s1:5", "s1:10"}},
		{"slow at most", "slow:<=1ms kind:request", []string{"s1:7", "s1:11"}},
		{"text with a capital matches case", "Echo", []string{"s1:9"}},
		{"lower case text ignores case", "hello session:s1", []string{"s1:4", "s1:9"}},
		{"text with a colon is quoted", `"Echo:"`, []string{"s1:9"}},
		{"quoted text with a space", `"not json"`, []string{"s1:13"}},
		{"regexp", `/"progress":\d/`, []string{"s1:6"}},
		{"session by id", "session:s2", []string{"s2:1", "s2:2", "s2:3"}},
	}
	all := visibleSeqs(m)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := filtered(t, m, src, tt.filter)
			want := tt.want
			if tt.filter == "" {
				want = all
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("filter %q (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
	if len(all) != 16 || all[0] != "s1:1" || all[13] != "s2:1" {
		t.Errorf("time order across sessions: %v", all)
	}
}

// The sessions pane counts a session's messages and its errors: what the
// error term finds, JSON-RPC errors and results with isError (and error
// pages: TestModel_ErrorPagesAgree), not malformed frames.
func TestModel_SessionCounts(t *testing.T) {
	m, _ := openModel(t, writeCassette(t, sampleSession, sampleSession[:3]))
	if len(m.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(m.Sessions))
	}
	// s1's errors: #10 (isError), #12 (a JSON-RPC error); #13 is malformed.
	for i, want := range []Session{{Messages: 13, Errors: 2, LastSeq: 13}, {Messages: 3, Errors: 0, LastSeq: 3}} {
		got := m.Sessions[i]
		if got.Messages != want.Messages || got.Errors != want.Errors || got.LastSeq != want.LastSeq {
			t.Errorf("session %s: %d messages, %d errors, last seq %d; want %d, %d, %d",
				got.Info.ID, got.Messages, got.Errors, got.LastSeq, want.Messages, want.Errors, want.LastSeq)
		}
	}
}

// A response pairs only with a request of its own session that is still
// waiting: not with another session's request of the same id (sessions
// recorded side by side reuse ids), and not with a request that an
// earlier response answered (a duplicate answer pairs with nothing).
func TestModel_PairingStaysInSessionAndOnce(t *testing.T) {
	m, _ := openModel(t, writeCassette(t,
		[]frame{{store.C2S, 0, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"never-answered"}}`}},
		[]frame{{store.S2C, 0, `{"jsonrpc":"2.0","id":7,"result":{}}`}},
		[]frame{
			{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{store.S2C, time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{store.S2C, 2 * time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		},
	))
	pairs := map[string]string{}
	for i := range m.Len() {
		r, _ := m.ByIndex(i)
		pair := "none"
		if p, ok := m.ByIndex(r.Pair); ok {
			pair = fmt.Sprintf("%s:%d", p.Session, p.Seq)
		}
		pairs[fmt.Sprintf("%s:%d", r.Session, r.Seq)] = pair
	}
	want := map[string]string{"s1:1": "none", "s2:1": "none", "s3:1": "s3:2", "s3:2": "s3:1", "s3:3": "none"}
	if diff := cmp.Diff(want, pairs); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
}

// session: takes a session's name (mcpspy record --session) as well as
// its id.
func TestModel_FilterSessionByName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "named.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alpha", "beta"} {
		s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Name: name, Start: t0})
		if err != nil {
			t.Fatal(err)
		}
		s.Append(store.C2S, t0, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	if got := filtered(t, m, src, "session:beta"); !slices.Equal(got, []string{"s2:1"}) {
		t.Errorf("session:beta shows %v, want [s2:1]", got)
	}
}

func TestParseFilter_Errors(t *testing.T) {
	tests := []struct{ name, filter, want string }{
		{"unknown key", "foo:bar", `unknown key "foo"`},
		{"a key near one", "tol:echo", `quote text to search for it); did you mean tool?`},
		{"text ending in a colon", "Echo:", `unknown key "Echo" (want method, tool`},
		{"unknown key with an empty alternative", "foo:a|", `unknown key "foo"`},
		{"bad kind", "kind:reply", `unknown kind "reply"`},
		{"bad dir", "dir:up", `dir must be c2s or s2c`},
		{"bad duration", "slow:>fast", `slow needs a duration`},
		{"bad time", "time:>noon", `time needs a clock time like >=10:00:05.250 or an RFC 3339 time`},
		{"a time with no value", "time:>", `time needs a clock time`},
		{"bad regexp", "/(/", `bad regexp`},
		{"unclosed quote", `"abc`, `filter: "\"abc": unclosed quote`}, // the filter, then what is wrong, as for a term
		{"lonely not", "!", `! must be followed by a term`},
		{"empty value", "method:", `needs a value`},
		{"unknown lint rule", "lint:unanswerd", `unknown lint rule or severity "unanswerd"`},
		{"unknown severity among rules", "lint:unanswered|fatal", `unknown lint rule or severity "fatal"`},
		{"empty lint", "lint:", `needs a value`},
		{"empty alternative", "method:tools/list|", `method: an empty alternative in "tools/list|"`},
		{"empty first alternative", "tool:|echo", `tool: an empty alternative`},
		{"negative duration", "slow:>-5s", `not a negative one: -5s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFilter(tt.filter)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseFilter(%q) = %v, want an error with %q", tt.filter, err, tt.want)
			}
		})
	}
}

func TestModel_ApplyKeepsPositions(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession[:4]))
	f, _ := ParseFilter("kind:request")
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	before := visibleSeqs(m)
	b := &Batch{Msgs: []BatchMsg{
		{Session: "s1", Sum: store.Summary{Seq: 5, Dir: store.S2C, Time: t0.Add(time.Second), Kind: 2, ID: "2"}},
		{Session: "s1", Sum: store.Summary{Seq: 6, Dir: store.C2S, Time: t0.Add(2 * time.Second), Kind: 1, ID: "3", Method: "ping"}},
		{Session: "s1", Sum: store.Summary{Seq: 6, Dir: store.C2S, Time: t0.Add(2 * time.Second), Kind: 1, ID: "3", Method: "ping"}},
	}}
	if err := m.Apply(b, src); err != nil {
		t.Fatal(err)
	}
	got := visibleSeqs(m)
	if diff := cmp.Diff(append(before, "s1:6"), got); diff != "" {
		t.Errorf("after Apply (-want +got):\n%s", diff)
	}
	if r, _ := m.ByIndex(3); r.Latency != time.Second-10*time.Millisecond {
		t.Errorf("tools/call latency after its response arrived: %v", r.Latency)
	}
	if m.Len() != 6 {
		t.Errorf("duplicate seq applied: %d rows", m.Len())
	}
}

func TestModel_ToolStats(t *testing.T) {
	m, _ := openModel(t, writeCassette(t, sampleSession))
	want := []ToolStat{
		{Tool: "echo", Calls: 1, P50: 5 * time.Millisecond, P95: 5 * time.Millisecond},
		{Tool: "slow-op", Calls: 1, Errors: 1, P50: 300 * time.Millisecond, P95: 300 * time.Millisecond},
	}
	if diff := cmp.Diff(want, m.ToolStats()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The tools summary sorts each tool's latencies before taking
// percentiles, counts calls without an answer as pending (not in the
// latencies), and covers only the session the table is limited to.
func TestModel_ToolStatsScopeAndPending(t *testing.T) {
	call := func(id int, at time.Duration) frame {
		return frame{store.C2S, at, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, id)}
	}
	answer := func(id int, at time.Duration) frame {
		return frame{store.S2C, at, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id)}
	}
	ms := time.Millisecond
	// Latencies in recorded order 30, 10, 20 ms; call 4 is never answered;
	// call 5 is cancelled and not answered, call 6 cancelled and answered
	// all the same.
	cancel := func(id int, at time.Duration) frame {
		return frame{store.C2S, at, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id)}
	}
	echoes := []frame{call(1, 0), answer(1, 30*ms), call(2, 40*ms), answer(2, 50*ms), call(3, 60*ms), answer(3, 80*ms), call(4, 90*ms),
		call(5, 91*ms), cancel(5, 92*ms), call(6, 93*ms), cancel(6, 94*ms), answer(6, 95*ms)}
	m, src := openModel(t, writeCassette(t, sampleSession, echoes))
	all := []ToolStat{
		{Tool: "echo", Calls: 7, Pending: 1, Cancelled: 1, P50: 10 * ms, P95: 30 * ms}, // 2, 5, 10, 20, 30 ms
		{Tool: "slow-op", Calls: 1, Errors: 1, P50: 300 * ms, P95: 300 * ms},
	}
	if diff := cmp.Diff(all, m.ToolStats()); diff != "" {
		t.Errorf("all sessions (-want +got):\n%s", diff)
	}
	if err := m.SetScope(1, src); err != nil {
		t.Fatal(err)
	}
	second := []ToolStat{{Tool: "echo", Calls: 6, Pending: 1, Cancelled: 1, P50: 10 * ms, P95: 30 * ms}} // 2, 10, 20, 30 ms
	if diff := cmp.Diff(second, m.ToolStats()); diff != "" {
		t.Errorf("limited to s2 (-want +got):\n%s", diff)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", d[:1], 95, 1},
		{"p50 of 100", d, 50, 50},
		{"p95 of 100", d, 95, 95},
		{"p95 of 10", d[:10], 95, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.p); got != tt.want {
				t.Errorf("got %v want %v", got, tt.want)
			}
		})
	}
}

func TestModel_ExportRoundTrip(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession, sampleSession[:3]))
	f, _ := ParseFilter("tool:echo")
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Export(&buf, src, m.VisibleIndexes()); err != nil {
		t.Fatal(err)
	}
	tape, err := store.ReadJSONL(&buf, "export")
	if err != nil {
		t.Fatalf("export does not read back: %v\n%s", err, buf.String())
	}
	if len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) != 2 {
		t.Fatalf("exported %+v", tape)
	}
	msg := tape.Sessions[0].Messages[1]
	if got := string(msg.Frame); got != sampleSession[8].json {
		t.Errorf("frame changed: %s", got)
	}
	if msg.Seq != 2 || msg.Note != "exported from test.db s1 #9" {
		t.Errorf("seq %d note %q", msg.Seq, msg.Note)
	}
}

// A message that already has a note (an earlier export's, say) keeps it
// when exported again; where it came from is added after it.
func TestModel_ExportKeepsNote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "noted.jsonl")
	jsonl := `{"session":"s1","info":{"id":"s1","transport":"stdio","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"ping"},"note":"from the bug report"}
`
	if err := os.WriteFile(path, []byte(jsonl), 0o600); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	var buf bytes.Buffer
	if err := m.Export(&buf, src, []int{0}); err != nil {
		t.Fatal(err)
	}
	tape, err := store.ReadJSONL(&buf, "export")
	if err != nil {
		t.Fatal(err)
	}
	const want = "from the bug report; exported from noted.jsonl s1 #1"
	if got := tape.Sessions[0].Messages[0].Note; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

func TestIndexFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   int
	}{
		{"Hello World", "world", 6},
		{"hello", "hello", 0},
		{"xxHELLO", "hello", 2},
		{"abc", "abcd", -1},
		{"aaaab", "aab", 2},
		{"123-x", "-x", 3},
		{"", "a", -1},
	}
	for _, tt := range tests {
		t.Run(tt.s+"/"+tt.sub, func(t *testing.T) {
			if got := indexFold([]byte(tt.s), []byte(tt.sub)); got != tt.want {
				t.Errorf("got %d want %d", got, tt.want)
			}
		})
	}
}

// SetScopes limits the table to several sessions (mcpspy show with
// --session repeated), whose rows name their session as with all of
// them; Scope names the one session the table is limited to, if one.
func TestModel_SetScopes(t *testing.T) {
	one := []frame{{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`}}
	m, src := openModel(t, writeCassette(t, one, one, one))
	tests := []struct {
		name      string
		scopes    []int
		wantScope int
		want      []string // the rows' sessions, in order
	}{
		{"none: all", nil, -1, []string{"s1", "s2", "s3"}},
		{"-1: all", []int{-1}, -1, []string{"s1", "s2", "s3"}},
		{"one", []int{1}, 1, []string{"s2"}},
		{"two", []int{2, 0}, -1, []string{"s1", "s3"}},
		{"one twice", []int{2, 2}, 2, []string{"s3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := m.SetScopes(tt.scopes, src); err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range m.Visible() {
				r, _ := m.Row(i)
				got = append(got, r.Session)
			}
			if !slices.Equal(got, tt.want) || m.Scope() != tt.wantScope {
				t.Errorf("rows of %v, scope %d; want %v, %d", got, m.Scope(), tt.want, tt.wantScope)
			}
			if qualified := strings.Contains(m.cellTexts(mustRow(t, m, 0))[0], ":"); qualified != (len(tt.want) > 1) {
				t.Errorf("seq qualified by its session: %v, with %d sessions in scope", qualified, len(tt.want))
			}
		})
	}
}

func mustRow(t *testing.T, m *Model, i int) Row {
	t.Helper()
	r, ok := m.Row(i)
	if !ok {
		t.Fatalf("no row %d", i)
	}
	return r
}

// TestModel_FollowGrowsALoadedSession: Open puts every session's rows in
// a stretch of one table (loadDB); a session that grows when followed
// must move out of its stretch rather than write over the next session's.
func TestModel_FollowGrowsALoadedSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	w, live := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: t0})
	appendFrames := func(frames []frame) {
		for _, f := range frames {
			live.Append(f.dir, t0.Add(f.at), []byte(f.json), nil)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	appendFrames(sampleSession[:4])
	recordSession(t, w, "server", t0.Add(time.Second), sampleSession)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	m, src := openModel(t, path)
	appendFrames(sampleSession[4:])
	b, err := src.Poll(m.After())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(b, src); err != nil {
		t.Fatal(err)
	}
	// Free text reads the frames of each session by its rows. s1's new
	// rows come after those Open loaded.
	if diff := cmp.Diff([]string{"s2:10", "s1:10"}, filtered(t, m, src, "boom")); diff != "" {
		t.Errorf("free text after s1 grew (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s2:12", "s1:12"}, filtered(t, m, src, `"Resource not found"`)); diff != "" {
		t.Errorf("free text after s1 grew (-want +got):\n%s", diff)
	}
}

// Without colour (mcpspy show) a failed tool call must still read as one:
// an isError result is marked as a JSON-RPC error is with its code, and a
// result that succeeded is not marked.
func TestModel_TextMarksFailedCalls(t *testing.T) {
	lines := textLines(t, sampleSession)
	for seq, want := range map[int]string{
		9:  " tools/call echo",
		10: " tools/call slow-op [isError]",
		12: " resources/read [-32002]",
	} {
		if line := lines[seq-1]; !strings.HasSuffix(line, want) {
			t.Errorf("line %q\nwant it to end %q", line, want)
		}
	}
}

// time: picks messages by when they were read, as Wireshark's frame.time
// does: a clock time as show and the table print it (local), or an RFC
// 3339 time.
func TestModel_FilterTime(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession, sampleSession[:3]))
	clock := func(d time.Duration) string { return t0.Add(d).Local().Format("15:04:05.000") }
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"after a clock time", "time:>" + clock(300*time.Millisecond), []string{"s1:10", "s1:11", "s1:12", "s1:13", "s2:1", "s2:2", "s2:3"}},
		{"no operator is at or after", "session:s1 time:" + clock(321*time.Millisecond), []string{"s1:12", "s1:13"}},
		{"at most, to the millisecond", "time:<=" + clock(2*time.Millisecond), []string{"s1:1", "s1:2"}},
		{"a range in RFC 3339", "time:>=" + t0.Add(time.Second).Format(time.RFC3339Nano) + " time:<" + t0.Add(1003*time.Millisecond).Format(time.RFC3339Nano), []string{"s2:1", "s2:2"}},
		{"negated", "!time:<" + clock(330*time.Millisecond) + " session:s1", []string{"s1:13"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, filtered(t, m, src, tt.filter)); diff != "" {
				t.Errorf("filter %q (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
}
