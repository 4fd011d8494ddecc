package lint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Lint finds a request by its id's value, as the inspector pairs them
// (jsonrpc.CanonicalID): an answer, a cancel's requestId and a progress
// token written another way than the request wrote them still name it,
// while "1" and 1 stay apart. Each finding shows the id as written.
func TestSession_IDsCompareByValue(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string // findings as Finding.String gives them
	}{
		{"an answer with the string id escaped", opened(
			`> {"jsonrpc":"2.0","id":"\u0031","method":"ping"}`, `< {"jsonrpc":"2.0","id":"1","result":{}}`,
		), nil},
		{"an answer with the integer id as 1.0 or 1e0", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1e0,"result":{}}`,
			`< {"jsonrpc":"2.0","id":7,"method":"ping"}`, `> {"jsonrpc":"2.0","id":7.0,"result":{}}`,
		), []string{
			"s1:5: error: id 1e0 is not an integer; MCP ids are strings or integers [id-not-integer]",
			"s1:7: error: id 7.0 is not an integer; MCP ids are strings or integers [id-not-integer]",
		}},
		{"a cancel naming request 3 as 3e0", opened(
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3e0}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
		), []string{"s1:6: info: answers tools/call 3 after it was cancelled at #5 [answered-after-cancel]"}},
		{"a progress token written another way", opened(
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":10}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1e1,"progress":2}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":10.0,"progress":1}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		), []string{"s1:6: error: progress 1 after 2 for token 10.0; it must increase [progress-not-increasing]"}},
		{"an id reused, written another way", opened(
			`> {"jsonrpc":"2.0","id":"a","method":"ping"}`, `< {"jsonrpc":"2.0","id":"a","result":{}}`,
			`> {"jsonrpc":"2.0","id":"\u0061","method":"ping"}`, `< {"jsonrpc":"2.0","id":"a","result":{}}`,
		), []string{`s1:6: error: client ping reuses id "\u0061", first used by ping at #4 [id-reused]`}},
		{"a string and an integer of the same digits stay apart", opened(
			`> {"jsonrpc":"2.0","id":"\u0031","method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0035"}}`,
		), []string{
			`s1:4: warning: ping "\u0031" (client) was never answered [unanswered]`,
			"s1:5: error: answers id 1, which the client never sent [response-unknown-id]",
			`s1:6: warning: cancels request "\u0035", which the client never sent [cancel-unknown]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Session(session(tt.lines...), Options{}) {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
