package script

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcptape/mcptape/replay"
)

// A call cancelled during its delay, or while it waits between progress
// steps, stops there: no answer, and no progress after the cancellation
// (the client has forgotten the token). The delays are an hour: only the
// cancellation ends them.
func TestSession_CancelledDuringDelays(t *testing.T) {
	const src = `
tools:
  - name: slow
    answers:
      - {delay: 1h, text: too late}
  - name: steps
    answers:
      - progress:
          - {progress: 1, delay: 1h}
          - {progress: 2}
        text: too late
`
	s, err := Parse("cancel.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ss := s.Open()
	for i, tool := range []string{"slow", "steps"} {
		peer := &fakePeer{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the client cancelled before the delay ran out
		params, _ := json.Marshal(map[string]any{"name": tool, "_meta": map[string]any{"progressToken": "t"}})
		req := &replay.Request{ID: json.RawMessage(itoa(i + 1)), Method: "tools/call", Params: params}
		r, ok := ss.Answer(ctx, peer, req)
		if !ok || !r.NoReply || r.Result != nil || r.Error != nil {
			t.Errorf("%s cancelled: reply %+v (answered %v), want no reply", tool, r, ok)
		}
		if sent := peer.take(); len(sent) != 0 {
			t.Errorf("%s cancelled: sent %q after the cancellation", tool, sent)
		}
	}
}

// A list with nothing in it is an empty array, never null: clients
// iterate over it (the TS SDK's schema refuses null). The script has
// neither tools nor resources.
func TestSession_EmptyListIsArray(t *testing.T) {
	s, err := Parse("empty.yaml", []byte("server: {name: empty, version: \"1\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	for _, list := range []string{"tools", "resources"} {
		r, ok := c.ask(list+"/list", nil)
		if want := `{"` + list + `":[]}`; !ok || r.Error != nil || string(r.Result) != want {
			t.Errorf("%s/list of none: %s %+v (answered %v), want %s", list, r.Result, r.Error, ok, want)
		}
	}
}
