package script

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/replay"
)

const clientTaskScript = `
tools:
  - name: ask
    inputSchema: {type: object}
    sample:
      messages: [{role: user, text: "hi"}]
      maxTokens: 5
      task: {ttl: 5000}
    answers:
      - when: {sampled: {model: m}}
        text: "got {{.sampled.content.text}}"
      - {isError: true, text: no reply}
`

// TestSession_ClientTask: a sample with task, put to a handshake-era
// client that takes sampling tasks, carries params.task; a client that
// makes a task of it is polled (tasks/get) until the task ends and its
// result (tasks/result) is the reply, unless it failed; one that answers
// at once is taken at its word; one that did not declare such tasks is asked plainly; a
// poll the client cannot answer leaves no reply.
func TestSession_ClientTask(t *testing.T) {
	s, err := Parse("client-task.yaml", []byte(clientTaskScript))
	if err != nil {
		t.Fatal(err)
	}
	takesTasks := map[string]any{"sampling": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"sampling": map[string]any{"createMessage": map[string]any{}}}}}
	const sampled = `{"role":"assistant","model":"m","content":{"type":"text","text":"yes"}}`
	created := func(status string) json.RawMessage {
		return json.RawMessage(`{"task":{"taskId":"c1","status":"` + status + `","createdAt":"2026-11-27T08:00:00Z","lastUpdatedAt":"2026-11-27T08:00:00Z","ttl":5000,"pollInterval":1}}`)
	}
	tests := []struct {
		name string
		caps map[string]any
		// statuses are the client's answers to tasks/get, in turn; nil
		// makes no task (the sampling is answered at once).
		statuses []string
		pollErr  bool
		want     string
		asked    []string
	}{
		{"polled to its end", takesTasks, []string{"working", "completed"}, false, "got yes", []string{
			`sampling/createMessage {"maxTokens":5,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"task":{"ttl":5000}}`,
			`tasks/get {"taskId":"c1"}`, `tasks/get {"taskId":"c1"}`, `tasks/result {"taskId":"c1"}`,
		}},
		{"needs input: fetched at once", takesTasks, []string{"input_required"}, false, "got yes", []string{
			`sampling/createMessage {"maxTokens":5,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"task":{"ttl":5000}}`,
			`tasks/get {"taskId":"c1"}`, `tasks/result {"taskId":"c1"}`,
		}},
		{"answered at once", takesTasks, nil, false, "got yes", []string{
			`sampling/createMessage {"maxTokens":5,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"task":{"ttl":5000}}`,
		}},
		{"no task capability", map[string]any{"sampling": map[string]any{}}, nil, false, "got yes", []string{
			`sampling/createMessage {"maxTokens":5,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}]}`,
		}},
		{"the task fails", takesTasks, []string{"working", "failed"}, false, "no reply", []string{
			`sampling/createMessage {"maxTokens":5,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"task":{"ttl":5000}}`,
			`tasks/get {"taskId":"c1"}`, `tasks/get {"taskId":"c1"}`,
		}},
		{"the poll fails", takesTasks, []string{"working"}, true, "no reply", []string{
			`sampling/createMessage {"maxTokens":5,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"task":{"ttl":5000}}`,
			`tasks/get {"taskId":"c1"}`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, s)
			c.ask("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": tc.caps, "clientInfo": map[string]any{"name": "c", "version": "1"}}) // the engine answers it; the script notes the capabilities
			var mu sync.Mutex
			polls := 0
			c.peer.answers = func(method string, _ json.RawMessage) (json.RawMessage, error) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case method == "sampling/createMessage" && tc.statuses != nil:
					return created("working"), nil
				case method == "sampling/createMessage", method == "tasks/result":
					return json.RawMessage(sampled), nil
				case method == "tasks/get" && tc.pollErr:
					return nil, &replay.RPCError{Code: -32602, Message: "Task not found"}
				case method == "tasks/get":
					status := tc.statuses[min(polls, len(tc.statuses)-1)]
					polls++
					return json.RawMessage(`{"taskId":"c1","status":"` + status + `","createdAt":"2026-11-27T08:00:00Z","lastUpdatedAt":"2026-11-27T08:00:00Z","ttl":5000}`), nil
				}
				return nil, &replay.RPCError{Code: -32601, Message: "not here"}
			}
			c.peer.take()
			res := c.result("tools/call", toolCall("ask", map[string]any{}))
			if got := firstText(t, res); got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
			var asked []string
			for _, line := range c.peer.take() {
				if m, ok := strings.CutPrefix(line, "call "); ok {
					asked = append(asked, m)
				}
			}
			if d := cmp.Diff(tc.asked, asked); d != "" {
				t.Errorf("the client was asked (-want +got):\n%s", d)
			}
		})
	}
}

// TestCheck_ClientTask: task takes true or {ttl: N}, nothing else.
func TestCheck_ClientTask(t *testing.T) {
	for _, tc := range []struct{ task, want string }{
		{"5", "task must be true or a mapping with ttl"},
		{"{ttl: -1}", "ttl must be a whole number of milliseconds above 0"},
		{"{ttl: 1.5}", "ttl must be a whole number of milliseconds above 0"},
		{"{poll: 10}", "task takes only ttl (milliseconds), not poll"},
	} {
		src := strings.Replace(clientTaskScript, "task: {ttl: 5000}", "task: "+tc.task, 1)
		_, err := Parse("client-task.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "client-task.yaml:8") {
			t.Errorf("task: %s: error %v, want %q at line 8", tc.task, err, tc.want)
		}
	}
	for _, ok := range []string{"true", "false", "{}"} {
		if _, err := Parse("client-task.yaml", []byte(strings.Replace(clientTaskScript, "task: {ttl: 5000}", "task: "+ok, 1))); err != nil {
			t.Errorf("task: %s: %v", ok, err)
		}
	}
}
