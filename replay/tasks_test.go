package replay_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// taskTape is a task as server-everything's simulate-research-query runs
// one, cut short: made, polled twice while working (a status notification
// between polls), polled once completed, its result fetched. The client,
// the TypeScript SDK's callToolStream, sends the call's task metadata
// along on every poll.
var taskTape = []string{
	`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"srv","version":"2"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","arguments":{"topic":"tape"},"task":{"ttl":60000}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"working","statusMessage":"one"}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"T1","status":"working","statusMessage":"one","pollInterval":1000}}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T1","task":{"ttl":60000}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"taskId":"T1","status":"working","statusMessage":"one"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"working","statusMessage":"two"}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1","task":{"ttl":60000}}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","status":"working","statusMessage":"two"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"completed","statusMessage":"two"}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"T1","task":{"ttl":60000}}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"taskId":"T1","status":"completed","statusMessage":"done"}}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"T1","task":{"ttl":60000}}}`,
	`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"report"}]}}`,
}

// blockedTape is a host that fetched the result at once: its tasks/result
// waited for the task, which told of its end while it waited, and no poll
// came after.
var blockedTape = []string{
	taskTape[0], taskTape[1], taskTape[2], taskTape[3], taskTape[4], taskTape[5],
	`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"taskId":"T1","status":"working","statusMessage":"one"}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"completed","statusMessage":"ended"}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"report"}]}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Cannot cancel task in terminal status: completed"}}`,
}

// listTape is taskTape with a tasks/list after the first poll, and one
// after the result.
var listTape = slices.Concat(taskTape[:8], []string{
	`> {"jsonrpc":"2.0","id":6,"method":"tasks/list"}`,
	`< {"jsonrpc":"2.0","id":6,"result":{"tasks":[{"taskId":"T1","status":"working","statusMessage":"one"},{"taskId":"T0","status":"failed"}]}}`,
}, taskTape[8:], []string{
	`> {"jsonrpc":"2.0","id":7,"method":"tasks/list"}`,
	`< {"jsonrpc":"2.0","id":7,"result":{"tasks":[{"taskId":"T1","status":"completed","statusMessage":"listed"},{"taskId":"T0","status":"failed"}]}}`,
})

// cancelTape is a task polled once and cancelled while working, then
// polled again.
var cancelTape = slices.Concat(taskTape[:8], []string{
	`> {"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","status":"cancelled","statusMessage":"by the client"}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"taskId":"T1","status":"cancelled","statusMessage":"by the client"}}`,
})

// ask sends a request and returns what answered it, in short: a task's id,
// status and message, a result's text, or an error's message. What the
// server sends meanwhile (status notifications) is passed over.
func ask(c *lineClient, id int, method, params string) string {
	c.tb.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		var m struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
			Result struct {
				Task *struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
				TaskID        string `json:"taskId"`
				Status        string `json:"status"`
				StatusMessage string `json:"statusMessage"`
				Content       []struct {
					Text string `json:"text"`
				} `json:"content"`
				Tasks []struct {
					TaskID        string `json:"taskId"`
					Status        string `json:"status"`
					StatusMessage string `json:"statusMessage"`
				} `json:"tasks"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		line := c.recv()
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.tb.Fatalf("%s: unreadable answer %q: %v", method, line, err)
		}
		if m.ID == nil || *m.ID != id || m.Method != "" {
			continue
		}
		r := m.Result
		switch {
		case m.Error != nil:
			msg, _, _ := strings.Cut(m.Error.Message, ";") // up to the nearest request
			return "error " + msg
		case r.Task != nil:
			return "created " + r.Task.TaskID
		case r.TaskID != "":
			return fmt.Sprintf("%s %s %s", r.TaskID, r.Status, r.StatusMessage)
		case len(r.Content) > 0:
			return "result " + r.Content[0].Text
		case r.Tasks != nil:
			out := "list"
			for _, t := range r.Tasks {
				out += fmt.Sprintf(" %s %s %s", t.TaskID, t.Status, t.StatusMessage)
			}
			return out
		}
		return line
	}
}

// TestCassette_Tasks replays tasks to hosts that poll as the recorded one
// did, and to hosts that do not: the task the replay shows never goes
// back to a state it has left.
func TestCassette_Tasks(t *testing.T) {
	type step struct{ method, params, want string }
	create := step{"tools/call", `{"name":"research","arguments":{"topic":"tape"},"task":{"ttl":60000}}`, "created T1"}
	get := func(want string) step { return step{"tasks/get", `{"taskId":"T1"}`, want} }
	result := step{"tasks/result", `{"taskId":"T1"}`, "result report"}
	list := func(want string) step { return step{"tasks/list", `{}`, want} }
	tests := []struct {
		name  string
		tape  []string
		steps []step
		// allUsed: nothing recorded is reported unused (polls the task
		// passed included)
		allUsed bool
	}{
		{"polled as recorded, and once more", taskTape, []step{
			create, get("T1 working one"), get("T1 working two"), get("T1 completed done"), result,
			get("T1 completed done"),
		}, true},
		{"the poll's task metadata and the call's ttl left out of matching", taskTape, []step{
			{"tools/call", `{"name":"research","arguments":{"topic":"tape"},"task":{}}`, "created T1"},
			{"tasks/get", `{"taskId":"T1","task":{"ttl":5}}`, "T1 working one"},
		}, false},
		{"a plain call is not a task call", taskTape, []step{
			{"tools/call", `{"name":"research","arguments":{"topic":"tape"}}`, "error mcpmock: no recorded answer for tools/call"},
		}, false},
		{"the result fetched before the recorded polls ran out", taskTape, []step{
			create, get("T1 working one"), result,
			// the recording's next poll says working: the task has ended
			get("T1 completed done"), get("T1 completed done"),
		}, true},
		{"a poll after a result no poll followed", blockedTape, []step{
			create, get("T1 working one"), result,
			// the recording has no poll after the result: its notification
			// told the task's end
			get("T1 completed ended"),
			{"tasks/cancel", `{"taskId":"T1"}`, "error Cannot cancel task in terminal status: completed"},
		}, true},
		{"a list after an early result shows the task ended", listTape, []step{
			create, result, list("list T1 completed done T0 failed "),
			// the recorded list after the result, as it is
			list("list T1 completed listed T0 failed "),
		}, false},
		{"a poll after a list that showed the task ended", listTape, []step{
			create, list("list T1 working one T0 failed "), list("list T1 completed listed T0 failed "),
			get("T1 completed listed"),
		}, false},
		{"a list before the task was made leaves it out", listTape, []step{
			// T0 the recorded session did not make: the server knew it
			list("list T0 failed "), create, get("T1 working one"),
		}, false},
		{"a task cancelled before the recorded first poll", cancelTape, []step{
			create, {"tasks/cancel", `{"taskId":"T1"}`, "T1 cancelled by the client"},
			get("T1 cancelled by the client"), get("T1 cancelled by the client"),
		}, true},
		{"polls before the result as recorded", blockedTape, []step{
			create, get("T1 working one"), get("T1 working one"), result,
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tt.tape...)})
			c := dialTasks(t, s)
			var got, want []string
			for i, st := range tt.steps {
				got = append(got, fmt.Sprintf("%s %s: %s", st.method, st.params, ask(c, 200+i, st.method, st.params)))
				want = append(want, fmt.Sprintf("%s %s: %s", st.method, st.params, st.want))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("answers (-want +got):\n%s", d)
			}
			if u := s.Report().Unused; tt.allUsed && len(u) > 0 {
				t.Errorf("reported unused: %q", u)
			}
		})
	}
}

// Each live session follows its own tasks: a second client replaying the
// same cassette starts from the recorded beginning, whatever the first
// one got to.
func TestCassette_TasksPerSession(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, taskTape...)})
	a, b := dialTasks(t, s), dialTasks(t, s)
	call := `{"name":"research","arguments":{"topic":"tape"},"task":{"ttl":60000}}`
	ask(a, 1, "tools/call", call)
	ask(a, 2, "tasks/get", `{"taskId":"T1"}`)
	ask(a, 3, "tasks/result", `{"taskId":"T1"}`)
	ask(b, 1, "tools/call", call)
	if got, want := ask(b, 2, "tasks/get", `{"taskId":"T1"}`), "T1 working one"; got != want {
		t.Errorf("second session's first poll: %q, want %q", got, want)
	}
	if got, want := ask(a, 4, "tasks/get", `{"taskId":"T1"}`), "T1 completed done"; got != want {
		t.Errorf("first session's poll after its result: %q, want %q", got, want)
	}
}

// dialTasks opens a stdio session with s as a 2025-11-25 client.
func dialTasks(t *testing.T, s *mocktest.Server) *lineClient {
	t.Helper()
	c := dial(t, s)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":100,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`); !strings.Contains(got, `"tasks"`) {
		t.Fatalf("initialize: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// A 2026-07-28 client's plain call of a tool that the recording called
// only as a task gets the task's recorded result (tasks/result), the
// answer a 2026-07-28 server would have given it: without the
// related-task _meta, and without the task's status notifications. A
// recording that never fetched the result has no answer for it, unless
// it saw the task fail: then the call gets an isError result saying so,
// as mcpspy export --script answers it. A handshake-era client, which can
// make the task itself, still gets none.
func TestCassette_PlainCallOf2026GetsTaskResult(t *testing.T) {
	fetched := slices.Concat(taskTape[:14], []string{
		`> {"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"T1"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"completed"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"fetched"}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"report"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"T1"},"trace":"t"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"completed"}}`,
	})
	failed := slices.Concat(taskTape[:14], []string{
		`> {"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"T1"}}`,
		`< {"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the research failed"}}`,
	})
	// Never fetched, the task last seen failing, in a status notification
	// without a statusMessage.
	failedUnfetched := slices.Concat(taskTape[:11], []string{
		`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"failed"}}`,
	})
	plain := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + statelessMeta + `,"name":"research","arguments":{"topic":"tape"}}}`
	tests := []struct {
		name      string
		tape      []string
		handshake bool // a 2025-11-25 client, the call without _meta
		want      []string
		unmatched bool
	}{
		{"the fetched result", fetched, false, []string{
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"fetched"}}`,
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"report"}],"_meta":{"trace":"t"},"resultType":"complete"}}`,
		}, false},
		{"the fetched error", failed, false, []string{
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"the research failed"}}`,
		}, false},
		{"never fetched", taskTape[:14], false, nil, true},
		{"never fetched, failed", failedUnfetched, false, []string{
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"the task failed while recording"}],"isError":true,"resultType":"complete"}}`,
		}, false},
		{"a handshake-era client", fetched, true, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tt.tape...)})
			c := dial(t, s)
			req := plain
			if tt.handshake {
				c = dialTasks(t, s)
				req = strings.Replace(plain, statelessMeta+",", "", 1)
			}
			c.send(req)
			var got []string
			for {
				l := c.recv()
				got = append(got, l)
				if strings.Contains(l, `"id":7`) {
					break
				}
			}
			// What follows the answer: nothing before the ping's answer
			// (the status notification after the fetch was the task's).
			if l := c.roundTrip(`{"jsonrpc":"2.0","id":8,"method":"ping"}`); !strings.Contains(l, `"id":8`) {
				got = append(got, l)
			}
			if tt.unmatched {
				if len(got) != 1 || !strings.Contains(got[0], `"code":-32602`) {
					t.Errorf("sent %q; want the call unmatched", got)
				}
			} else if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("sent (-want +got):\n%s", d)
			}
			s.Close()
			r := s.Report()
			if (len(r.Unmatched) > 0) != tt.unmatched {
				t.Errorf("report: unmatched %+v; want unmatched: %v", r.Unmatched, tt.unmatched)
			}
			// The call, the polls and the fetch were used: the client
			// had the outcome they were for. initialize is left out.
			if !tt.unmatched && (len(r.Unused) > 0 || len(r.LeftOut) != 1) {
				t.Errorf("report: unused %q, left out %+v; want only initialize left out", r.Unused, r.LeftOut)
			}
		})
	}
}
