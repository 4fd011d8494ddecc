package mcpgo_test

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// load reads a cassette back, and logs it one line a message if the test
// fails.
func load(t *testing.T, spy, db string) *store.Tape {
	t.Helper()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatalf("load cassette: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, err := exec.Command(spy, "export", db).CombinedOutput()
			t.Logf("cassette %s (%v):\n%s", db, err, out)
		}
	})
	return tape
}

// shape lists a session's messages as "dir kind method-or-id", the
// progress notifications apart: mcp-go's servers place those unlike the
// rest (see wantProgress).
func shape(msgs []*store.Message) (rest, progress []string) {
	for _, m := range msgs {
		s := jsonrpc.Classify(m.Frame)
		if s.Method == "notifications/progress" {
			progress = append(progress, fmt.Sprintf("%s %s", m.Dir, m.Frame))
			continue
		}
		what := s.Method
		if what == "" {
			what = "id=" + s.ID
		}
		rest = append(rest, fmt.Sprintf("%s %s %s", m.Dir, s.Kind, what))
	}
	return rest, progress
}

// checkPairs checks that seq is dense from 1, and that every request is
// answered once, after it, in the other direction.
func checkPairs(t *testing.T, s store.TapeSession) {
	t.Helper()
	asked := map[string]uint64{} // dir+id → seq
	for i, m := range s.Messages {
		if m.Seq != uint64(i+1) {
			t.Errorf("session %s: message %d has seq %d", s.Info.ID, i, m.Seq)
		}
		sum := jsonrpc.Classify(m.Frame)
		switch sum.Kind {
		case jsonrpc.Request:
			asked[string(m.Dir)+sum.ID] = m.Seq
		case jsonrpc.Response, jsonrpc.Error:
			other := store.C2S
			if m.Dir == store.C2S {
				other = store.S2C
			}
			if _, ok := asked[string(other)+sum.ID]; !ok {
				t.Errorf("session %s seq %d: answer to id %s, which no earlier request in the other direction has", s.Info.ID, m.Seq, sum.ID)
			}
			delete(asked, string(other)+sum.ID)
		}
	}
	if len(asked) > 0 {
		t.Errorf("session %s: requests never answered: %v", s.Info.ID, asked)
	}
}

// progressAround counts the progress notifications recorded for token
// before and after the answer to the request that asked for them.
func progressAround(msgs []*store.Message, token string) (before, after int) {
	answered := false
	var callID string
	for _, m := range msgs {
		s := jsonrpc.Classify(m.Frame)
		switch {
		case m.Dir == store.C2S && s.Kind == jsonrpc.Request && s.ProgressToken == `"`+token+`"`:
			callID = s.ID
		case m.Dir == store.S2C && s.Kind != jsonrpc.Notification && callID != "" && s.ID == callID:
			answered = true
		case s.Method == "notifications/progress" && s.ProgressToken == `"`+token+`"`:
			if answered {
				after++
			} else {
				before++
			}
		}
	}
	return before, after
}
