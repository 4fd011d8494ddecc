package lint

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Findings gives what a live session has shown so far, and the check goes
// on: later messages and Finish still see everything before them.
func TestChecker_FindingsSoFar(t *testing.T) {
	s := session(opened(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":1}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`< {"jsonrpc":"2.0","id":9,"result":{}}`,
	)...)
	c := NewChecker(s.Info, Options{})
	steps := []struct {
		upTo int // messages added before asking
		want []string
	}{
		{3, []string{}},
		{6, []string{"progress-not-increasing@6"}},
		{6, []string{"progress-not-increasing@6"}}, // asking twice changes nothing
		{7, []string{"progress-not-increasing@6", "response-unknown-id@7"}},
	}
	added := 0
	for _, st := range steps {
		for ; added < st.upTo; added++ {
			c.Add(s.Messages[added])
		}
		if diff := cmp.Diff(st.want, found(c.Findings())); diff != "" {
			t.Errorf("after %d messages (-want +got):\n%s", st.upTo, diff)
		}
	}
	// The session has ended: Finish adds the unanswered call, which
	// Findings could not know of, and agrees with a check of the whole.
	got := c.Finish()
	if want := Session(s, Options{}); !slices.Equal(got, want) {
		t.Errorf("Finish after Findings:\n%v\nwant what Session gives:\n%v", got, want)
	}
	if !slices.Contains(found(got), "unanswered@4") {
		t.Errorf("Finish lacks the unanswered call: %v", found(got))
	}
}
