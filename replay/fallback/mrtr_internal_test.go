package fallback

import (
	"strings"
	"testing"
)

// noteState keeps the requestState of an input_required result, and
// only of one: names and the word compare as JSON has them, escapes
// decoded.
func TestSession_NoteState(t *testing.T) {
	big := `"` + strings.Repeat("A", 1<<20) + `"`
	for _, tc := range []struct {
		name, result, want string
	}{
		{"input required", `{"resultType":"input_required","requestState":"s1","inputRequests":{}}`, `"s1"`},
		{"state an object", `{"requestState":{"n":1},"resultType":"input_required"}`, `{"n":1}`},
		{"escaped word", `{"resultType":"input\u005frequired","requestState":"s2"}`, `"s2"`},
		{"complete", `{"resultType":"complete","requestState":"s3"}`, ``},
		{"no result type", `{"content":[],"requestState":"s4"}`, ``},
		{"no state", `{"resultType":"input_required"}`, ``},
		{"name in other case", `{"ResultType":"input_required","requestState":"s5"}`, ``},
		{"a big result", `{"content":[{"type":"text","text":` + big + `}]}`, ``},
		{"not an object", `[1,2]`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &session{}
			got := ss.noteState([]byte(tc.result))
			if string(got) != tc.want {
				t.Fatalf("noteState = %s, want %s", got, tc.want)
			}
			if kept := len(ss.states); kept != 0 != (tc.want != "") || (tc.want != "" && !ss.states[tc.want]) {
				t.Errorf("states kept: %v", ss.states)
			}
		})
	}
}
