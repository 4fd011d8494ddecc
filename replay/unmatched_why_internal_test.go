package replay

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The report's Why for a reply a source marked Unmatched: what the source
// told (Explainer), else its error's message or its first text content,
// cut short however big (a script quotes the call's arguments, which may
// be 64 MiB).
func TestUnmatchedWhy(t *testing.T) {
	big := strings.Repeat("é", 1<<20) // two bytes a rune, after an odd 11: the cut falls inside one
	bigResult, _ := json.Marshal(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "no answer: " + big}}})
	tests := []struct {
		name  string
		reply Reply
		told  string // by the source (Explainer)
		want  string // the start of Why
		cut   bool
	}{
		{"error", Reply{Error: &RPCError{Code: -32603, Message: "no answer of prompt"}}, "", "no answer of prompt", false},
		{"error with a why", Reply{Error: &RPCError{Code: -32602, Message: `tools/call: unknown tool "x"`, Why: `the script has no tool "x"`}}, "", `the script has no tool "x"`, false},
		{"isError result", Reply{Result: json.RawMessage(`{"content":[{"type":"image","data":"x"},{"type":"text","text":"no answer of tool"}],"isError":true}`)}, "", "no answer of tool", false},
		{"result without text", Reply{Result: json.RawMessage(`{"content":[]}`)}, "", "the source had no answer for it", false},
		{"task created", Reply{Result: json.RawMessage(`{"task":{"taskId":"task-1","status":"working"}}`)}, "", "the source had no answer for it: the task it created ends with its reply saying so (tasks/result)", false},
		{"big result", Reply{Result: bigResult}, "", "no answer: é", true},
		{"task created, why told", Reply{Result: json.RawMessage(`{"task":{"taskId":"task-1","status":"working"}}`)}, "no answer of tool \"x\" matches", "no answer of tool \"x\" matches", false},
		{"error, why told", Reply{Error: &RPCError{Code: -32603, Message: "no answer of prompt", Why: "the error's why"}}, "told", "told", false},
		{"big why told", Reply{Result: json.RawMessage(`{"task":{"taskId":"task-1","status":"working"}}`)}, "no answer: " + big, "no answer: é", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unmatchedWhy(tt.reply, tt.told)
			if !strings.HasPrefix(got, tt.want) || !tt.cut && got != tt.want {
				t.Errorf("Why %.80q, want %q", got, tt.want)
			}
			if tt.cut && (len(got) > whyMax+len("…") || !strings.HasSuffix(got, "…")) {
				t.Errorf("Why is %d bytes, want at most %d and cut", len(got), whyMax+len("…"))
			}
			if !utf8.ValidString(got) {
				t.Errorf("Why is not UTF-8: %q", got)
			}
		})
	}
}
