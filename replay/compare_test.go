package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// lcsLength is the textbook O(N·M) longest common subsequence length.
func lcsLength(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// Myers' pairs must be a common subsequence, and a longest one.
func TestCommonSubsequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seq := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + rng.IntN(4)))
		}
		return out
	}
	for trial := range 3000 {
		a, b := seq(rng.IntN(25)), seq(rng.IntN(25))
		pairs := commonSubsequence(a, b)
		for i, p := range pairs {
			if a[p[0]] != b[p[1]] || (i > 0 && (p[0] <= pairs[i-1][0] || p[1] <= pairs[i-1][1])) {
				t.Fatalf("trial %d: %v vs %v: pairs %v are not a common subsequence", trial, a, b, pairs)
			}
		}
		if want := lcsLength(a, b); len(pairs) != want {
			t.Fatalf("trial %d: %v vs %v: %d pairs, longest is %d", trial, a, b, len(pairs), want)
		}
	}
}

func sessionOf(lines ...string) *store.TapeSession {
	s := &store.TapeSession{Info: store.SessionInfo{ID: "s1"}}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, l := range lines {
		dir := store.C2S
		if strings.HasPrefix(l, "< ") {
			dir = store.S2C
		}
		s.Messages = append(s.Messages, &store.Message{Seq: uint64(i + 1), Dir: dir, Time: t0, Frame: []byte(l[2:])})
	}
	return s
}

func TestCompareSessions(t *testing.T) {
	base := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},"_meta":{"progressToken":5}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	}
	tests := []struct {
		name string
		b    []string
		want []string // Op, request, seqs, detail
	}{
		{"the same, other ids, token and key order", []string{
			`> {"id":"a","jsonrpc":"2.0","method":"tools/list"}`,
			`< {"result":{"tools":[{"name":"echo"}]},"jsonrpc":"2.0","id":"a"}`,
			`> {"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"arguments":{"m":"hi"},"name":"echo","_meta":{"progressToken":"t"}}}`,
			`< {"jsonrpc":"2.0","id":"b","result":{"content":[{"text":"hi","type":"text"}]}}`,
		}, []string{
			`= tools/list  (a#1 b#1)`,
			`= tools/call {"arguments":{"m":"hi"},"name":"echo"}  (a#3 b#3)`,
		}},
		{"answers that write their request's id another way", []string{
			`> {"jsonrpc":"2.0","id":"\u0031","method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":"1","result":{"tools":[{"name":"echo"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}`,
			`< {"jsonrpc":"2.0","id":2e0,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		}, []string{
			`= tools/list  (a#1 b#1)`,
			`= tools/call {"arguments":{"m":"hi"},"name":"echo"}  (a#3 b#3)`,
		}},
		{"another answer", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"},{"name":"sum"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}`,
			`< {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}`,
		}, []string{
			"~ tools/list  (a#1 b#1)\n    + result.tools[1].name=\"sum\"",
			"~ tools/call {\"arguments\":{\"m\":\"hi\"},\"name\":\"echo\"}  (a#3 b#3)\n    - result.content[0].text=\"hi\"\n    - result.content[0].type=\"text\"\n    + error.code=-32602\n    + error.message=\"no\"",
		}},
		{"values redacted on one side equal any value", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"[redacted]"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"[redacted]"}}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		}, []string{
			`= tools/list  (a#1 b#1)`,
			`= tools/call {"arguments":{"m":"[redacted]"},"name":"echo"}  (a#3 b#3)`,
		}},
		{"the same requests in a batch, one answered otherwise", []string{
			`> [{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}]`,
			`< [{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}},{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`,
		}, []string{
			"~ tools/list  (a#1 b#1)\n    - result.tools[0].name=\"echo\"\n    + result.tools=[]",
			`= tools/call {"arguments":{"m":"hi"},"name":"echo"}  (a#3 b#1)`,
		}},
		{"a request only one side made, one unanswered", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}`,
		}, []string{
			`- tools/list  (a#1)`,
			`+ prompts/list  (b#1)`,
			"~ tools/call {\"arguments\":{\"m\":\"hi\"},\"name\":\"echo\"}  (a#3 b#3)\n    + (no answer)\n    - result.content[0].text=\"hi\"\n    - result.content[0].type=\"text\"",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range CompareSessions(sessionOf(base...), sessionOf(tt.b...)) {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Requests made in another order (parallel calls, a host that lists
// tools before resources in one run and after in the other) pair with
// their counterparts, as replay pairs them, by method and params, and
// their answers are compared; only the order is told, by Moved.
func TestCompareSessions_Moved(t *testing.T) {
	call := func(id int, text, answer string) []string {
		return []string{
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"m":%q}}}`, id, text),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, id, answer),
		}
	}
	list := func(id int, method string) []string {
		return []string{
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":%q}`, id, method),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{}}`, id),
		}
	}
	run := func(parts ...[]string) *store.TapeSession { return sessionOf(slices.Concat(parts...)...) }
	tests := []struct {
		name string
		a, b *store.TapeSession
		want string
	}{
		{"two parallel calls swapped",
			run(list(1, "tools/list"), call(2, "x", "x"), call(3, "y", "y")),
			run(list(1, "tools/list"), call(2, "y", "y"), call(3, "x", "x")),
			`= tools/list  (a#1 b#1)
= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#3 b#5, moved)
= tools/call {"arguments":{"m":"y"},"name":"echo"}  (a#5 b#3)`},
		{"a moved call answered otherwise",
			run(call(1, "x", "x"), call(2, "y", "y")),
			run(call(1, "y", "y"), call(2, "x", "X")),
			`~ tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#1 b#3, moved)
    - result.content[0].text="x"
    + result.content[0].text="X"
= tools/call {"arguments":{"m":"y"},"name":"echo"}  (a#3 b#1)`},
		{"lists before and after",
			run(list(1, "tools/list"), list(2, "resources/list"), call(3, "x", "x")),
			run(list(1, "resources/list"), call(2, "x", "x"), list(3, "tools/list")),
			`= tools/list  (a#1 b#5, moved)
= resources/list  (a#3 b#1)
= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#5 b#3)`},
		{"repeated identical calls pair in order",
			run(call(1, "x", "first"), list(2, "tools/list"), call(3, "x", "second")),
			run(list(1, "tools/list"), call(2, "x", "first"), call(3, "x", "second")),
			`= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#1 b#3, moved)
= tools/list  (a#3 b#1)
= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#5 b#5)`},
		{"a move beside requests only one side made",
			run(call(1, "x", "x"), list(2, "tools/list"), list(3, "prompts/list")),
			run(list(1, "tools/list"), list(2, "resources/list"), call(3, "x", "x")),
			`= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#1 b#5, moved)
= tools/list  (a#3 b#1)
- prompts/list  (a#5)
+ resources/list  (b#3)`},
		{"a repeated call made once more on one side is not a move",
			run(call(1, "x", "x"), list(2, "tools/list"), call(3, "x", "x")),
			run(call(1, "x", "x"), call(2, "x", "x"), list(3, "tools/list"), call(4, "x", "x")),
			`= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#1 b#1)
+ tools/call {"arguments":{"m":"x"},"name":"echo"}  (b#3)
= tools/list  (a#3 b#5)
= tools/call {"arguments":{"m":"x"},"name":"echo"}  (a#5 b#7)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := differences(CompareSessions(tt.a, tt.b)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// Past six differing leaves Detail is cut; AllLeaves holds them all, in
// the same order, and Cut counts what Detail left out.
func TestCompareSessions_AllLeaves(t *testing.T) {
	var tools, other []string
	for i := range 10 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d"}`, i))
		other = append(other, fmt.Sprintf(`{"name":"u%d"}`, i))
	}
	answer := func(tools []string) *store.TapeSession {
		return sessionOf(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{"tools":[`+strings.Join(tools, ",")+`]}}`)
	}
	d := CompareSessions(answer(tools), answer(other))
	if len(d) != 1 || d[0].Op != AnswerDiffs {
		t.Fatalf("%v, want one answered differently", d)
	}
	all := strings.Split(d[0].AllLeaves, "\n")
	shown := strings.Split(d[0].Detail, "\n")
	if len(all) != 20 || d[0].Cut != 14 || shown[len(shown)-1] != "… 14 more" {
		t.Fatalf("%d leaves in AllLeaves, Cut %d, Detail\n%s", len(all), d[0].Cut, d[0].Detail)
	}
	if !slices.Equal(all[:6], shown[:6]) || all[0] != `- result.tools[0].name="t0"` || all[19] != `+ result.tools[9].name="u9"` {
		t.Errorf("AllLeaves\n%s\ndoes not start as Detail\n%s", d[0].AllLeaves, d[0].Detail)
	}
	// Six or fewer: nothing cut, nothing more to show.
	d = CompareSessions(answer(tools[:3]), answer(other[:3]))
	if len(d) != 1 || d[0].Cut != 0 || d[0].AllLeaves != "" || strings.Count(d[0].Detail, "\n") != 5 {
		t.Errorf("three leaves each side: Cut %d, AllLeaves %q, Detail\n%s", d[0].Cut, d[0].AllLeaves, d[0].Detail)
	}
}

// A request one side never answered says so first, however long the
// other side's answer: "(no answer)" came after the other side's leaves,
// and past six of them it was cut off, so that a rerun whose server went
// away showed its last request as answered differently, with no word of
// the missing answer.
func TestCompareSessions_NoAnswerFirst(t *testing.T) {
	var tools []string
	for i := range 10 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d"}`, i))
	}
	a := sessionOf(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{"tools":[`+strings.Join(tools, ",")+`]}}`)
	b := sessionOf(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, tt := range []struct {
		name string
		a, b *store.TapeSession
		want string
	}{
		{"b unanswered", a, b, "+ (no answer)"},
		{"a unanswered", b, a, "- (no answer)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := CompareSessions(tt.a, tt.b)
			if len(d) != 1 || d[0].Op != AnswerDiffs {
				t.Fatalf("%v, want one answered differently", d)
			}
			lines := strings.Split(d[0].Detail, "\n")
			if lines[0] != tt.want || lines[len(lines)-1] != "… 5 more" {
				t.Errorf("detail\n%s\nwant its first line %q, then the leaves cut after six lines", d[0].Detail, tt.want)
			}
		})
	}
}

// Members named to ignore are left out of requests and answers alike.
func TestCompareSessions_Ignore(t *testing.T) {
	a := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi","at":1}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"at":1}}`,
	)
	b := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi","at":2}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"at":3}}`,
	)
	var got []string
	for _, d := range CompareSessions(a, b, "at") {
		got = append(got, d.String())
	}
	if want := `= tools/call {"arguments":{"at":"(ignored)","m":"hi"},"name":"echo"}  (a#1 b#1)`; strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	if d := CompareSessions(a, b); len(d) != 2 || d[0].Op == Same {
		t.Errorf("without ignore: %v", d)
	}
}

// Two runs of a host using tasks: the server made other task ids and
// times each run. The comparison names tasks by the order they were
// created, so the polls line up and compare equal; what a task did (its
// status, its result) still compares.
func TestCompareSessions_Tasks(t *testing.T) {
	run := func(id, at, polled, text string) *store.TapeSession {
		task := func(status string) string {
			return `{"taskId":"` + id + `","status":"` + status + `","createdAt":"` + at + `","lastUpdatedAt":"` + at + `","ttl":null}`
		}
		return sessionOf(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","task":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"task":`+task("working")+`}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":`+task(polled)+`}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+id+`"}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"`+text+`"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}}}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"tasks/list"}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"tasks":[`+task("completed")+`]}}`,
		)
	}
	a := run("0f3c", "2026-11-27T08:00:00Z", "working", "done")
	b := run("9a1b", "2026-11-27T09:30:00Z", "working", "done")
	var got []string
	for _, d := range CompareSessions(a, b) {
		got = append(got, d.String())
	}
	want := `= tools/call {"name":"research","task":{}}  (a#1 b#1)
= tasks/get {"taskId":"task #1"}  (a#3 b#3)
= tasks/result {"taskId":"task #1"}  (a#5 b#5)
= tasks/list  (a#7 b#7)`
	if strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	c := run("77aa", "2026-11-27T10:00:00Z", "completed", "other")
	var ops []string
	for _, d := range CompareSessions(a, c) {
		ops = append(ops, string(d.Op))
	}
	if strings.Join(ops, "") != "=~~=" {
		t.Errorf("a task that did otherwise: ops %v, want the poll and the result answered differently", ops)
	}
}

// Whatever two sessions hold, the comparison lists each side's requests
// once, in recorded order, and pairs only requests with the same key.
func FuzzCompareSessions(f *testing.F) {
	f.Add("> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n< {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		"> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\",\"params\":{\"x\":1}}")
	f.Add("> {\"id\":1,\"method\":\"a\"}\n> {\"id\":2,\"method\":\"b\"}\n> {\"id\":3,\"method\":\"a\"}",
		"> {\"id\":1,\"method\":\"b\"}\n> {\"id\":2,\"method\":\"a\"}\n< {\"id\":2,\"result\":1}\n> {\"id\":3,\"method\":\"a\"}")
	f.Add("> {\"id\":\"x\",\"method\":\"m\",\"params\":[1]}\n< {\"id\":\"x\",\"error\":{\"code\":1}}", "> not json\n< {\"id\":null}")
	f.Fuzz(func(t *testing.T, a, b string) {
		session := func(text string) *store.TapeSession {
			var lines []string
			for l := range strings.SplitSeq(text, "\n") {
				if strings.HasPrefix(l, "> ") || strings.HasPrefix(l, "< ") {
					lines = append(lines, l)
				}
			}
			return sessionOf(lines...)
		}
		sa, sb := session(a), session(b)
		ra, rb := comparedBoth(sa, sb, CompareOptions{})
		var seqA []uint64
		listedB := make([]int, len(rb)) // times each of b's requests is listed
		lastB := 0                      // IndexB of the last listed in order
		onlyA, onlyB := map[string]bool{}, map[string]bool{}
		lastOfKey := map[string]int{} // IndexB last paired, by key
		for _, d := range CompareSessions(sa, sb) {
			if d.Op != OnlyInB {
				seqA = append(seqA, d.SeqA)
				if d.IndexA != len(seqA) {
					t.Fatalf("%v: IndexA %d, listed %d-th of a's", d, d.IndexA, len(seqA))
				}
			}
			if d.Op != OnlyInA {
				if d.IndexB < 1 || d.IndexB > len(rb) || rb[d.IndexB-1].seq != d.SeqB {
					t.Fatalf("%v: IndexB %d names no request of b with its seq", d, d.IndexB)
				}
				listedB[d.IndexB-1]++
				if !d.Moved {
					if d.IndexB <= lastB {
						t.Fatalf("%v: listed after b's %d-th, but not moved", d, lastB)
					}
					lastB = d.IndexB
				}
			}
			switch d.Op {
			case Same, AnswerDiffs:
				x, y := ra[d.IndexA-1], rb[d.IndexB-1]
				if x.key != y.key {
					t.Fatalf("paired %q with %q", x.key, y.key)
				}
				// Repeated identical requests pair in order, as replay
				// answers them.
				if d.IndexB <= lastOfKey[x.key] {
					t.Fatalf("%v: paired before b's %d-th of its key", d, lastOfKey[x.key])
				}
				lastOfKey[x.key] = d.IndexB
			case OnlyInA:
				onlyA[ra[d.IndexA-1].key] = true
			case OnlyInB:
				onlyB[rb[d.IndexB-1].key] = true
			}
		}
		if len(seqA) != len(ra) {
			t.Fatalf("a: %d requests listed, %d in the session", len(seqA), len(ra))
		}
		for i := range seqA {
			if seqA[i] != ra[i].seq {
				t.Fatalf("a: listed seqs %v, session's in order differ at %d", seqA, i)
			}
		}
		for j, n := range listedB {
			if n != 1 {
				t.Fatalf("b's %d-th request listed %d times", j+1, n)
			}
		}
		// A request both made is paired, wherever it stands.
		for k := range onlyA {
			if onlyB[k] {
				t.Fatalf("%q only in a and only in b: a move left unpaired", k)
			}
		}
	})
}
