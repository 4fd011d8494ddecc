package rerun_test

import (
	"slices"
	"testing"
	"time"

	"github.com/mcptape/mcptape/rerun"
)

// Answers pair with requests by the id's value, in the recording and
// live: an answer writing id 1 as 1.0 or 1e0 still answers request 1.
// What rerun says of a request shows its id as written.
func TestRun_IDsCompareByValue(t *testing.T) {
	tests := []struct {
		name, asked, answered, server string
		want                          []string
	}{
		{"the live server writes the id another way", `1`, `1`,
			`read l; echo '{"jsonrpc":"2.0","id":1.0,"result":{"tools":[]}}'; cat >/dev/null`, nil},
		{"the recording wrote it another way, and the live server is silent", `1`, `1e0`,
			`cat >/dev/null`, []string{"tools/list (id 1): no answer within 200ms, though the recording has one"}},
		{"a string id escaped, and the live server is silent", `"\u0031"`, `"1"`,
			`cat >/dev/null`, []string{`tools/list (id "\u0031"): no answer within 200ms, though the recording has one`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recorded := sessionOf(
				`> {"jsonrpc":"2.0","id":`+tt.asked+`,"method":"tools/list"}`,
				`< {"jsonrpc":"2.0","id":`+tt.answered+`,"result":{"tools":[]}}`,
			)
			res := runOK(t, recorded, rerun.Options{Command: []string{"sh", "-c", tt.server}, Timeout: 200 * time.Millisecond, Grace: time.Second})
			if !slices.Equal(res.Unanswered, tt.want) {
				t.Errorf("unanswered %q, want %q", res.Unanswered, tt.want)
			}
		})
	}
}
