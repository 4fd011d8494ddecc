package inspector

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// batchSession is a 2025-03-26 session with batches: one answered by a
// frame per element, as server-everything answers over HTTP (5, 6); one
// answered by an array (7, 8); the client's answer to a server request in
// a batch (10); a batch no one answers (11); one holding a value that is
// no message (12).
var batchSession = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`},
	{store.S2C, 2 * time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
	{store.C2S, 3 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{store.C2S, 10 * time.Millisecond, `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"batched"}}},` +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":2,"b":3}}},` +
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`},
	{store.S2C, 15 * time.Millisecond, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"The sum of 2 and 3 is 5."}]}}`},
	{store.S2C, 130 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Echo: batched"}]}}`},
	{store.C2S, 200 * time.Millisecond, ` [{"jsonrpc":"2.0","id":4,"method":"tools/list"},{"jsonrpc":"2.0","id":5,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"boom"}}]`},
	{store.S2C, 205 * time.Millisecond, `[{"jsonrpc":"2.0","id":5,"result":{}},{"jsonrpc":"2.0","id":4,"result":{"tools":[]}},` +
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Unknown tool: boom"}}]`},
	{store.S2C, 210 * time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
	{store.C2S, 212 * time.Millisecond, `[{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}]`},
	{store.C2S, 300 * time.Millisecond, `[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"lost"}}}]`},
	{store.C2S, 400 * time.Millisecond, `[{"jsonrpc":"2.0","id":8,"method":"ping"},42]`},
	{store.S2C, 401 * time.Millisecond, `{"jsonrpc":"2.0","id":8,"result":{}}`},
}

// batchCassettes returns batchSession as a cassette and as its JSONL
// export, which the inspector reads through another source.
func batchCassettes(t *testing.T) map[string]string { return cassetteAndExport(t, batchSession) }

// cassetteAndExport returns a session of frames as a cassette and as its
// JSONL export: the model reads each through another path (loadDB,
// Apply).
func cassetteAndExport(t *testing.T, frames []frame) map[string]string {
	t.Helper()
	db := writeCassette(t, frames)
	jsonl := filepath.Join(t.TempDir(), "export.jsonl")
	var buf bytes.Buffer
	if err := store.Export(db, &buf, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonl, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"db": db, "jsonl": jsonl}
}

// pairSeqs names the messages a row pairs with by seq.
func pairSeqs(m *Model, r Row) []uint64 {
	var out []uint64
	for _, idx := range r.Pairs() {
		p, _ := m.ByIndex(idx)
		out = append(out, p.Seq)
	}
	return out
}

// elemText sums up a batch's elements: "request tools/call echo 2 → 6".
func elemText(els []Elem) []string {
	var out []string
	for _, e := range els {
		s := strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s", e.Kind, e.Method, e.Tool, e.ID)), " ")
		if e.Pair >= 0 {
			s += fmt.Sprintf(" → %d", e.PairSeq)
		}
		out = append(out, s)
	}
	return out
}

func TestModel_BatchPairing(t *testing.T) {
	tests := []struct {
		name    string
		seq     uint64
		pairs   []uint64
		latency time.Duration
		method  string
		tool    string
		elems   []string // nil: not a batch
	}{
		{"a batch pairs with each answer", 4, []uint64{6, 5}, 120 * time.Millisecond, "", "", []string{
			"request tools/call echo 2 → 6", "request tools/call get-sum 3 → 5", "notification notifications/roots/list_changed",
		}},
		{"an answer on its own pairs with the batch, and takes its element's method", 5, []uint64{4}, 5 * time.Millisecond, "tools/call", "get-sum", nil},
		{"the slower answer", 6, []uint64{4}, 120 * time.Millisecond, "tools/call", "echo", nil},
		{"a batch answered by a batch", 7, []uint64{8}, 5 * time.Millisecond, "", "", []string{
			"request tools/list 4 → 8", "request ping 5 → 8", "request tools/call boom 6 → 8",
		}},
		{"the array of answers, in its own order", 8, []uint64{7}, 5 * time.Millisecond, "", "", []string{
			"response ping 5 → 7", "response tools/list 4 → 7", "error tools/call boom 6 → 7",
		}},
		{"a server request answered in a client's batch", 9, []uint64{10}, 2 * time.Millisecond, "roots/list", "", nil},
		{"the client's batch of one answer", 10, []uint64{9}, 2 * time.Millisecond, "", "", []string{"response roots/list 1 → 9"}},
		{"a batch no one answers", 11, nil, 0, "", "", []string{"request tools/call echo 7"}},
		{"a value that is no message stays in its batch, unpaired", 12, []uint64{13}, time.Millisecond, "", "", []string{"request ping 8 → 13", "malformed"}},
	}
	for name, path := range batchCassettes(t) {
		m, _ := openModel(t, path)
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				r := mustRow(t, m, int(tt.seq-1))
				if diff := cmp.Diff(tt.pairs, pairSeqs(m, r)); diff != "" {
					t.Errorf("seq %d pairs (-want +got):\n%s", tt.seq, diff)
				}
				if r.Latency != tt.latency || r.Method != tt.method || r.Tool != tt.tool {
					t.Errorf("seq %d: latency %v method %q tool %q; want %v %q %q", tt.seq, r.Latency, r.Method, r.Tool, tt.latency, tt.method, tt.tool)
				}
				if diff := cmp.Diff(tt.elems, elemText(r.Batch)); diff != "" {
					t.Errorf("seq %d elements (-want +got):\n%s", tt.seq, diff)
				}
			})
		}
	}
}

// A batch passes a filter when one of its elements, judged as a message
// of its own, passes the terms on summaries, and its frame the others.
func TestModel_BatchFilter(t *testing.T) {
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"tool finds the batch that calls it, and the answers", "tool:echo", []string{"s1:4", "s1:6", "s1:11"}},
		{"one element must pass every term", "tool:echo kind:response", []string{"s1:6"}},
		{"an error inside a batch", "tool:boom error", []string{"s1:8"}},
		{"not the error of another element", "tool:ping error", nil},
		{"method", "method:ping", []string{"s1:7", "s1:8", "s1:12", "s1:13"}},
		{"kind of an element", "kind:notification", []string{"s1:3", "s1:4"}},
		{"kind:batch still finds every batch", "kind:batch", []string{"s1:4", "s1:7", "s1:8", "s1:10", "s1:11", "s1:12"}},
		{"!kind:batch leaves every batch out", "!kind:batch dir:c2s", []string{"s1:1", "s1:3"}},
		{"a negated term takes a batch with another element", "!kind:request dir:c2s", []string{"s1:3", "s1:4", "s1:10", "s1:12"}},
		{"malformed element", "kind:malformed", []string{"s1:12"}},
		{"id of an element", "id:3", []string{"s1:4", "s1:5"}},
		{"slow answers", "slow:>100ms", []string{"s1:4", "s1:6"}},
		{"slow counts each element's own latency", "slow:<10ms kind:request", []string{"s1:1", "s1:4", "s1:7", "s1:9", "s1:12"}},
		{"error counts the batch once", "error", []string{"s1:8"}},
		{"text reads the batch's frame", "get-sum kind:batch", []string{"s1:4"}},
		{"lint finds the batch's unanswered call", "lint:unanswered", []string{"s1:11"}},
	}
	for name, path := range batchCassettes(t) {
		m, src := openModel(t, path)
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				if diff := cmp.Diff(tt.want, filtered(t, m, src, tt.filter)); diff != "" {
					t.Errorf("filter %q (-want +got):\n%s", tt.filter, diff)
				}
			})
		}
	}
}

func TestModel_BatchCounts(t *testing.T) {
	m, _ := openModel(t, writeCassette(t, batchSession))
	if s := m.Sessions[0]; s.Messages != 13 || s.Errors != 1 {
		t.Errorf("session counts %d messages, %d errors; want 13 frames, 1 of them an error", s.Messages, s.Errors)
	}
	want := []ToolStat{
		{Tool: "boom", Calls: 1, Errors: 1, P50: 5 * time.Millisecond, P95: 5 * time.Millisecond},
		{Tool: "echo", Calls: 2, Pending: 1, P50: 120 * time.Millisecond, P95: 120 * time.Millisecond},
		{Tool: "get-sum", Calls: 1, P50: 5 * time.Millisecond, P95: 5 * time.Millisecond},
	}
	if diff := cmp.Diff(want, m.ToolStats()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// show prints a batch as one line, what the table's row shows: its
// messages' names and ids, and the latency of its slowest answer.
func TestModel_BatchText(t *testing.T) {
	lines := textLines(t, batchSession)
	tests := []struct {
		seq  int
		want string // the line's end: id, latency, size, name
	}{
		{4, "2,3   120ms    270 3 msgs: tools/call echo, tools/call get-sum, notifications/roots/list_changed"},
		{5, "3   5.0ms     97 tools/call get-sum"},
		{8, "5,4,6   5.0ms    165 3 msgs: ping, tools/list, tools/call boom [-32602]"},
		{10, "1   2.0ms     48 1 msg: roots/list"},
		{11, "7            104 1 msg: tools/call echo"},
		{12, "8   1.0ms     45 2 msgs: ping, malformed"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.seq), func(t *testing.T) {
			line := lines[tt.seq-1]
			if !strings.HasPrefix(strings.TrimSpace(line), fmt.Sprint(tt.seq)+" ") || !strings.HasSuffix(line, tt.want) {
				t.Errorf("line %q\nwant it to end %q", line, tt.want)
			}
		})
	}
}

// show --resend names a batch in its comment as its line does.
func TestModel_BatchResendComment(t *testing.T) {
	m, src := openModel(t, writeCassette(t, batchSession))
	f, err := ParseFilter("kind:batch dir:c2s tool:get-sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := m.WriteText(context.Background(), &out, src, TextOptions{Resend: true}); err != nil {
		t.Fatal(err)
	}
	want := "# s1:4 3 msgs: tools/call echo, tools/call get-sum, notifications/roots/list_changed\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("show --resend:\n%s\nwant it to start %q", out.String(), want)
	}
}

// Follow mode: a batch read in one poll pairs with answers read in the
// next, and a batch among the new messages is taken apart too.
func TestModel_BatchFollow(t *testing.T) {
	path := writeCassette(t, sampleSession[:3])
	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Start: t0})
	m, src := openModel(t, path)
	f, err := ParseFilter("tool:get-sum")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	poll := func(frames ...frame) {
		t.Helper()
		for _, fr := range frames {
			s.Append(fr.dir, t0.Add(fr.at), []byte(fr.json), nil)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		b, err := src.Poll(m.After())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Apply(b, src); err != nil {
			t.Fatal(err)
		}
	}
	poll(batchSession[:4]...)
	poll(batchSession[4:6]...)
	if diff := cmp.Diff([]string{"s2:4", "s2:5"}, visibleSeqs(m)); diff != "" {
		t.Errorf("tool:get-sum while following (-want +got):\n%s", diff)
	}
	batch, _ := m.ByIndex(3 + 3) // s2's fourth message, after s1's three
	if diff := cmp.Diff([]uint64{6, 5}, pairSeqs(m, batch)); diff != "" {
		t.Errorf("the batch pairs with (-want +got):\n%s", diff)
	}
}

// The table shows a batch as one row naming its messages; the detail
// pane lists them with their answers and shows each answer below; p goes
// to each answer in turn, and back.
func TestView_Batch(t *testing.T) {
	m, src := openModel(t, writeCassette(t, batchSession))
	h := startApp(t, m, src, Options{}, 120, 40)
	h.waitFor(wait, []string{"batch", "3 msgs: tools/call echo, tools/call get-sum", "2,3", "120ms"})
	seq := func(want uint64) func(t *testing.T, h *harness) {
		return func(t *testing.T, h *harness) {
			t.Helper()
			h.waitSelected(wait, want)
		}
	}
	steps := []struct {
		step  keyStep
		check func(t *testing.T, h *harness)
	}{
		{keyStep{keys: "jjj", want: []string{
			"s1 #4  →  batch", "270 B · 3 msgs: tools/call echo, tools/call get-sum",
			"paired with s1 #6, s1 #5 below · p jumps to each in turn",
			"1. request tools/call echo · id 2 · answer s1 #6 · 120ms",
			"2. request tools/call get-sum · id 3 · answer s1 #5 · 5.0ms",
			"3. notification notifications/roots/list_changed",
		}}, seq(4)},
		{keyStep{keys: "p", want: []string{"pair 1 of 2", "paired request s1 #4 below"}}, seq(6)},
		{keyStep{keys: "p", want: []string{"paired with s1 #6, s1 #5 below"}}, seq(4)},
		{keyStep{keys: "p", want: []string{"pair 2 of 2", "s1 #5  ←  response"}}, seq(5)},
		{keyStep{keys: "p", want: []string{"paired with s1 #6, s1 #5 below"}}, seq(4)},
		{keyStep{keys: "p", want: []string{"pair 1 of 2"}}, seq(6)},
		{keyStep{keys: "f"}, nil},
		{keyStep{keys: "tool:get-sum"}, nil},
		{keyStep{key: keyEnter, want: []string{"filter: tool:get-sum", "2/13"}}, nil},
	}
	for _, st := range steps {
		h.play(wait, []keyStep{st.step})
		if st.check != nil {
			st.check(t, h)
		}
	}
}

// The detail pane of a batch shows each of its answers below it, and that
// of an answer the batch, as the request it answers.
func TestDetail_Batch(t *testing.T) {
	m, src := openModel(t, writeCassette(t, batchSession))
	tests := []struct {
		name string
		seq  int
		want []string // headings, in order
	}{
		{"a batch and its answers", 4, []string{"s1 #4  →  batch", "paired response: s1 #6  ←  response", "paired response: s1 #5  ←  response"}},
		{"an answer and its batch", 5, []string{"s1 #5  ←  response", "paired request: s1 #4  →  batch"}},
		{"an array of answers and the batch it answers", 8, []string{"s1 #8  ←  batch", "paired request: s1 #7  →  batch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRow(t, m, tt.seq-1)
			msg, err := src.Message(r.Ref)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range Detail(r, msg, m.paired(r, src), false, nil) {
				if len(l) == 1 && l[0].Class == Heading {
					got = append(got, l.String()[:strings.LastIndex(l.String(), "  ")])
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headings (-want +got):\n%s", diff)
			}
		})
	}
}

// A filter that matches nothing names what it asked for that no message
// has; a name used only inside a batch counts as had.
func TestFilter_UnheardSeesBatches(t *testing.T) {
	m, _ := openModel(t, writeCassette(t, batchSession))
	tests := []struct{ filter, want string }{
		{"method:ping kind:response", ""},
		{"method:pnig", `no message has method "pnig" (did you mean ping?)`},
		{"tool:boom|bom", `no message has tool "bom" (did you mean boom?)`},
		{"tool:far-from-anything", `no message has tool "far-from-anything"`},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Unheard(m); got != tt.want {
			t.Errorf("%q: Unheard %q, want %q", tt.filter, got, tt.want)
		}
	}
}
