package replay_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// The journal keeps every request and notification each client sent, in
// order, answered or not, and nothing else (not the client's replies to
// server→client requests).
func TestServer_Journal(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	a, b := dial(t, s), dial(t, s)
	a.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	b.roundTrip(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1}}}`)
	a.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	a.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"nope/nope","params":{"k":[1, 2]}}`)
	// ask makes the mock ask the client for its roots: the client's reply
	// is not a request, so it stays out of the journal.
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask"}}`)
	ask := a.recv()
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(ask), &req); err != nil || req.Method != "roots/list" {
		t.Fatalf("want roots/list from the mock, got %s", ask)
	}
	a.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"roots":[]}}`)
	if got := a.recv(); !strings.Contains(got, "asked") {
		t.Fatalf("want the recorded answer to ask, got %s", got)
	}

	// Sessions are numbered as they start, which for two pipes opened
	// together is either order: name them by what each sent first.
	rs := s.Received()
	num := map[int]string{}
	for _, r := range rs {
		if _, ok := num[r.Session]; !ok {
			num[r.Session] = map[string]string{"ping": "a", "tools/call": "b"}[r.Method]
		}
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s %s %s %s", num[r.Session], r.ID, r.Method, r.Params))
	}
	want := []string{
		`a 1 ping `,
		`b "x" tools/call {"name":"echo","arguments":{"text":"a","n":1}}`,
		`a  notifications/initialized `,
		`a 2 nope/nope {"k":[1, 2]}`,
		`a 3 tools/call {"name":"ask"}`,
	}
	if len(num) != 2 || num[1] == num[2] || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("journal (sessions %v):\n%s\nwant:\n%s", num, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if calls := s.ToolCalls("echo"); len(calls) != 1 || string(calls[0]) != `{"text":"a","n":1}` {
		t.Errorf("ToolCalls(echo) = %s", calls)
	}
	if calls := s.ToolCalls("ask"); len(calls) != 1 || calls[0] != nil {
		t.Errorf("ToolCalls(ask) = %q, want one call without arguments", calls)
	}
}
