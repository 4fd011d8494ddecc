package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// connAt is a session of lines (as sessionOf's) with id, each line
// recorded at its ms from t0: a connection of a sessionless client.
func connAt(id string, ms []int, lines ...string) *store.TapeSession {
	s := sessionOf(lines...)
	s.Info.ID = id
	t0 := s.Messages[0].Time
	for i, m := range s.Messages {
		m.Session, m.Time = id, t0.Add(time.Duration(ms[i])*time.Millisecond)
	}
	return s
}

func differences(diffs []Difference) string {
	var got []string
	for _, d := range diffs {
		got = append(got, d.String())
	}
	return strings.Join(got, "\n")
}

func TestCompareClients(t *testing.T) {
	const (
		list    = `{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`
		listed  = `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo"}]}}`
		echo    = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}`
		echoed  = `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`
		created = `{"jsonrpc":"2.0","id":%s,"result":{"task":{"taskId":"%s","status":"working"}}}`
	)
	f := func(format string, args ...string) string {
		for _, a := range args {
			format = strings.Replace(format, "%s", a, 1)
		}
		return format
	}
	// One run: a connection for the list and the second echo, another
	// for the first echo, sent while the list was unanswered, both with
	// id 1: each answer goes with its own connection's request.
	twoConns := []*store.TapeSession{
		connAt("s1", []int{0, 20, 30, 31},
			"> "+f(list, "1"), "< "+f(listed, "1"),
			"> "+f(echo, "2", "b"), "< "+f(echoed, "2", "b")),
		connAt("s2", []int{10, 12},
			"> "+f(echo, "1", "a"), "< "+f(echoed, "1", "a")),
	}
	// Another: everything on one connection.
	oneConn := []*store.TapeSession{connAt("s1", []int{0, 1, 10, 12, 30, 31},
		"> "+f(list, "1"), "< "+f(listed, "1"),
		"> "+f(echo, "2", "a"), "< "+f(echoed, "2", "a"),
		"> "+f(echo, "3", "b"), "< "+f(echoed, "3", "b"))}
	// The same, but the first echo answered otherwise.
	otherAnswer := []*store.TapeSession{connAt("s1", []int{0, 1, 10, 12, 30, 31},
		"> "+f(list, "1"), "< "+f(listed, "1"),
		"> "+f(echo, "2", "a"), "< "+f(echoed, "2", "A"),
		"> "+f(echo, "3", "b"), "< "+f(echoed, "3", "b"))}
	// Another, whose calls went out the other way round: paired all
	// the same, the move told.
	swapped := []*store.TapeSession{connAt("s1", []int{0, 1, 10, 12, 30, 31},
		"> "+f(list, "1"), "< "+f(listed, "1"),
		"> "+f(echo, "2", "b"), "< "+f(echoed, "2", "b"),
		"> "+f(echo, "3", "a"), "< "+f(echoed, "3", "A"))}
	// Requests recorded at the same time: by the order of the sessions,
	// then by seq.
	tied := []*store.TapeSession{
		connAt("s4", []int{5, 5}, "> "+f(echo, "1", "b"), "> "+f(echo, "2", "a")),
		connAt("s3", []int{5}, "> "+f(list, "1")),
	}
	inTiedOrder := []*store.TapeSession{connAt("s1", []int{0, 1, 2},
		"> "+f(echo, "1", "b"), "> "+f(echo, "2", "a"), "> "+f(list, "3"))}
	// A task created on one connection and polled on another is named
	// by the order the client's connections together created it.
	taskConns := []*store.TapeSession{
		connAt("s1", []int{0, 1},
			"> "+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","task":{}}}`,
			"< "+f(created, "1", "0f3c")),
		connAt("s2", []int{2, 3},
			"> "+`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"0f3c"}}`,
			"< "+`{"jsonrpc":"2.0","id":1,"result":{"taskId":"0f3c","status":"completed"}}`),
	}
	taskConn := []*store.TapeSession{connAt("s1", []int{0, 1, 2, 3},
		"> "+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","task":{}}}`,
		"< "+f(created, "1", "9a1b"),
		"> "+`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"9a1b"}}`,
		"< "+`{"jsonrpc":"2.0","id":2,"result":{"taskId":"9a1b","status":"completed"}}`)}
	tests := []struct {
		name string
		a, b []*store.TapeSession
		want string
	}{
		{"two connections against one", twoConns, oneConn, `= tools/list  (a s1:1 b s1:1)
= tools/call {"arguments":{"text":"a"},"name":"echo"}  (a s2:1 b s1:3)
= tools/call {"arguments":{"text":"b"},"name":"echo"}  (a s1:3 b s1:5)`},
		{"one answer otherwise", twoConns, otherAnswer, `= tools/list  (a s1:1 b s1:1)
~ tools/call {"arguments":{"text":"a"},"name":"echo"}  (a s2:1 b s1:3)
    - result.content[0].text="a"
    + result.content[0].text="A"
= tools/call {"arguments":{"text":"b"},"name":"echo"}  (a s1:3 b s1:5)`},
		{"calls in another order", twoConns, swapped, `= tools/list  (a s1:1 b s1:1)
~ tools/call {"arguments":{"text":"a"},"name":"echo"}  (a s2:1 b s1:5, moved)
    - result.content[0].text="a"
    + result.content[0].text="A"
= tools/call {"arguments":{"text":"b"},"name":"echo"}  (a s1:3 b s1:3)`},
		{"ties in recorded time", tied, inTiedOrder, `= tools/call {"arguments":{"text":"b"},"name":"echo"}  (a s4:1 b s1:1)
= tools/call {"arguments":{"text":"a"},"name":"echo"}  (a s4:2 b s1:2)
= tools/list  (a s3:1 b s1:3)`},
		{"a task polled on another connection", taskConns, taskConn, `= tools/call {"name":"research","task":{}}  (a s1:1 b s1:1)
= tasks/get {"taskId":"task #1"}  (a s2:1 b s1:3)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := differences(CompareClients(tt.a, tt.b)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A client of one session each side compares as CompareSessions does,
// but for the sessions it names.
func TestCompareClients_OneSessionEach(t *testing.T) {
	a := sessionOf(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)
	b := sessionOf(`> {"jsonrpc":"2.0","id":7,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":8,"method":"prompts/list"}`)
	sessions, clients := CompareSessions(a, b), CompareClients([]*store.TapeSession{a}, []*store.TapeSession{b})
	if len(sessions) != len(clients) {
		t.Fatalf("CompareSessions %v, CompareClients %v", sessions, clients)
	}
	for i, d := range clients {
		if d.SessionA != "" && d.SessionA != "s1" || d.SessionB != "" && d.SessionB != "s1" {
			t.Errorf("%v names sessions other than s1", d)
		}
		d.SessionA, d.SessionB = "", ""
		if d != sessions[i] {
			t.Errorf("CompareClients %v, CompareSessions %v", d, sessions[i])
		}
	}
	if got, want := differences(clients), "~ tools/list  (a s1:1 b s1:1)\n    - result={}\n    + result.tools=[]\n+ prompts/list  (b s1:3)"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
