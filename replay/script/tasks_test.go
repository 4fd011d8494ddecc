package script

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// TestTasks_Lifecycle: script-tasks.yaml's tools, called as tasks. The
// call gets the task at once, working; the answer plays behind it (its
// progress tied to the task, on the session); tasks/get follows it to
// completed and tasks/result gives the tool's result, tied to the task.
// An isError result fails its task; a hung one is working until
// cancelled; tasks/list has them all, in the order they came.
func TestTasks_Lifecycle(t *testing.T) {
	s := mustLoad(t, "script-tasks.yaml")
	c := newClient(t, s)
	init := c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	caps, _ := json.Marshal(init["capabilities"].(map[string]any)["tasks"])
	if string(caps) != `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("tasks capability %s", caps)
	}
	created := c.result("tools/call", map[string]any{"name": "research", "arguments": map[string]any{"topic": "tides"}, "task": map[string]any{"ttl": 60000},
		"_meta": map[string]any{"progressToken": "p1"}})
	task := created["task"].(map[string]any)
	if task["taskId"] != "task-1" || task["status"] != "working" || task["ttl"] != 60000.0 || task["pollInterval"] != 100.0 || task["createdAt"] == nil || task["lastUpdatedAt"] == nil {
		t.Fatalf("created %v", created)
	}
	status := func(id string) string {
		t.Helper()
		return c.result("tasks/get", map[string]any{"taskId": id})["status"].(string)
	}
	// (Its status right after is working, but only as long as this
	// machine does not stall 300 ms between two lines: forever, below,
	// shows a working task without that race.)
	res := c.result("tasks/result", map[string]any{"taskId": "task-1"}) // waits for it
	if got := firstText(t, res); got != "Report on tides: three sources agree." {
		t.Errorf("result %q", got)
	}
	if meta, _ := json.Marshal(res["_meta"]); string(meta) != `{"io.modelcontextprotocol/related-task":{"taskId":"task-1"}}` {
		t.Errorf("result _meta %s", meta)
	}
	if got := status("task-1"); got != "completed" {
		t.Errorf("task-1 after its result: %s", got)
	}
	sent := strings.Join(c.peer.take(), "\n")
	for _, want := range []string{
		`(session) notifications/progress {"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task-1"}},"message":"gathering","progress":1,"progressToken":"p1","total":2}`,
		`(session) notifications/tasks/status {"createdAt":`,
	} {
		if !strings.Contains(sent, want) {
			t.Errorf("the session was not sent %s; it was sent:\n%s", want, sent)
		}
	}

	c.result("tools/call", map[string]any{"name": "doomed", "task": map[string]any{}})
	c.result("tools/call", map[string]any{"name": "forever", "task": map[string]any{}})
	if r := c.result("tasks/result", map[string]any{"taskId": "task-2"}); r["isError"] != true {
		t.Errorf("doomed's result %v", r)
	}
	if got := c.result("tasks/get", map[string]any{"taskId": "task-2"}); got["status"] != "failed" || got["ttl"] != nil {
		t.Errorf("doomed's task %v, want failed with ttl null (none asked)", got)
	}
	deadline := time.Now().Add(200 * time.Millisecond) // hung stays working
	for time.Now().Before(deadline) {
		if got := status("task-3"); got != "working" {
			t.Fatalf("forever: %s", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := c.result("tasks/cancel", map[string]any{"taskId": "task-3"}); got["status"] != "cancelled" {
		t.Errorf("cancel: %v", got)
	}
	if r, _ := c.ask("tasks/cancel", map[string]any{"taskId": "task-3"}); r.Error == nil || r.Error.Code != -32602 || r.Error.Message != `tasks/cancel: task "task-3" is cancelled already` {
		t.Errorf("cancel again: %+v", r.Error)
	}
	if r, _ := c.ask("tasks/result", map[string]any{"taskId": "task-3"}); r.Error == nil || !strings.Contains(r.Error.Message, "was cancelled") {
		t.Errorf("a cancelled task's result: %+v", r)
	}
	var got []string
	for _, x := range c.result("tasks/list", nil)["tasks"].([]any) {
		m := x.(map[string]any)
		got = append(got, m["taskId"].(string)+" "+m["status"].(string))
	}
	if strings.Join(got, ", ") != "task-1 completed, task-2 failed, task-3 cancelled" {
		t.Errorf("tasks/list: %v", got)
	}
}

// TestTasks_Refused: where the script declares tasks, a tool that does not
// run as one refuses params.task, and one that runs only as one refuses a
// plain call: -32601, as the spec says; an optional one takes both. An
// unknown task id is -32602.
func TestTasks_Refused(t *testing.T) {
	c := newClient(t, mustLoad(t, "script-tasks.yaml"))
	for _, tt := range []struct {
		params map[string]any
		code   int
		msg    string // "" for a result
	}{
		{map[string]any{"name": "plain", "task": map[string]any{}}, -32601, "tools/call plain: this tool does not run as a task (its execution.taskSupport is absent, which means forbidden): call it without params.task"},
		{map[string]any{"name": "research", "arguments": map[string]any{"topic": "x"}}, -32601, "tools/call research: this tool runs only as a task (its execution.taskSupport is required): call it with params.task"},
		{map[string]any{"name": "convert"}, 0, ""},
		{map[string]any{"name": "convert", "task": map[string]any{}}, 0, ""},
	} {
		r, _ := c.ask("tools/call", tt.params)
		switch {
		case tt.msg == "" && r.Error != nil:
			t.Errorf("%v: %v", tt.params, r.Error)
		case tt.msg != "" && (r.Error == nil || r.Error.Code != tt.code || r.Error.Message != tt.msg):
			t.Errorf("%v: got %+v %s, want %d %q", tt.params, r.Error, r.Result, tt.code, tt.msg)
		}
	}
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if r, _ := c.ask(m, map[string]any{"taskId": "task-9"}); r.Error == nil || r.Error.Code != -32602 || r.Error.Message != m+`: no task "task-9" in this session` {
			t.Errorf("%s of an unknown task: %+v", m, r.Error)
		}
	}
	// Without tasks declared, params.task is ignored: a plain call; and
	// the tasks methods are unknown (the engine answers them unmatched).
	plain := newClient(t, mustLoad(t, "script-basic.yaml"))
	if r, _ := plain.ask("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}, "task": map[string]any{}}); r.Error != nil || !strings.Contains(string(r.Result), `"content"`) {
		t.Errorf("a script without tasks: %+v %s", r.Error, r.Result)
	}
	if _, ok := plain.ask("tasks/list", nil); ok {
		t.Error("a script without tasks answered tasks/list")
	}
}

// TestTasks_Check: mcpmock check names the line and field of a
// taskSupport it does not know.
func TestTasks_Check(t *testing.T) {
	for _, tt := range []struct{ name, tool, want string }{
		{"unknown", "{name: a, execution: {taskSupport: sometimes}, answers: [{text: x}]}",
			`t.yaml:2:26: tools[0].execution.taskSupport: taskSupport sometimes: want required, optional or forbidden`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte("tools:\n  - "+tt.tool+"\n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestFromTape_Tasks: a recording of calls a server ran as tasks. The
// script answers each tool with what tasks/result gave (without the
// _meta that tied it to its recorded task), a task that tasks/get found
// failed, whose result no one asked, with an isError result saying so,
// and keeps the tools' taskSupport: the script runs them as tasks again.
func TestFromTape_Tasks(t *testing.T) {
	tape := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"shaky","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"research","arguments":{"topic":"tides"},"task":{"ttl":60000}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"0f3c","status":"working","createdAt":"2026-11-27T08:00:00Z","lastUpdatedAt":"2026-11-27T08:00:00Z","ttl":60000}}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"0f3c"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"0f3c","status":"completed","createdAt":"2026-11-27T08:00:00Z","lastUpdatedAt":"2026-11-27T08:00:01Z","ttl":60000}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"0f3c"}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"tides: done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"0f3c"}}}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"shaky","arguments":{},"task":{}}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"9a1b","status":"working","createdAt":"2026-11-27T08:00:02Z","lastUpdatedAt":"2026-11-27T08:00:02Z","ttl":null}}}`,
		`> {"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"9a1b"}}`,
		`< {"jsonrpc":"2.0","id":6,"result":{"taskId":"9a1b","status":"failed","statusMessage":"upstream timed out","createdAt":"2026-11-27T08:00:02Z","lastUpdatedAt":"2026-11-27T08:00:03Z","ttl":null}}`,
	)
	s, out := generated(t, tape)
	if strings.Contains(string(out), "0f3c") || strings.Contains(string(out), "related-task") {
		t.Errorf("the script keeps the recorded task:\n%s", out)
	}
	c := newClient(t, s)
	created := c.result("tools/call", map[string]any{"name": "research", "arguments": map[string]any{"topic": "tides"}, "task": map[string]any{}})
	id := created["task"].(map[string]any)["taskId"].(string)
	if got := firstText(t, c.result("tasks/result", map[string]any{"taskId": id})); got != "tides: done" {
		t.Errorf("research's result %q\n%s", got, out)
	}
	created = c.result("tools/call", map[string]any{"name": "shaky", "arguments": map[string]any{}, "task": map[string]any{}})
	id = created["task"].(map[string]any)["taskId"].(string)
	if r := c.result("tasks/result", map[string]any{"taskId": id}); r["isError"] != true || firstText(t, r) != "upstream timed out" {
		t.Errorf("shaky's result %v\n%s", r, out)
	}
	if got := c.result("tasks/get", map[string]any{"taskId": id})["status"]; got != "failed" {
		t.Errorf("shaky's task %v", got)
	}
}

// TestTasks_InputRequired: a task whose tool asks the user first moves to
// input_required and waits; the client's tasks/result takes the question
// (elicitation/create, tied to the task) on its own request, and, the
// answer given, the task goes on working and gives its result there.
func TestTasks_InputRequired(t *testing.T) {
	c := newClient(t, mustLoad(t, "script-tasks.yaml"))
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	var asked json.RawMessage
	c.peer.answers = func(method string, params json.RawMessage) (json.RawMessage, error) {
		asked = params
		return json.RawMessage(`{"action":"accept","content":{"confirm":true,"note":"go"}}`), nil
	}
	created := c.result("tools/call", map[string]any{"name": "deploy", "arguments": map[string]any{"service": "api"}, "task": map[string]any{}})
	id := created["task"].(map[string]any)["taskId"].(string)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st := c.result("tasks/get", map[string]any{"taskId": id})["status"]
		if st == "input_required" {
			break
		}
		if st != "working" || time.Now().After(deadline) {
			t.Fatalf("task %s: %v, want input_required", id, st)
		}
	}
	if got := firstText(t, c.result("tasks/result", map[string]any{"taskId": id})); got != "deployed api (go)" {
		t.Errorf("result %q", got)
	}
	var p struct {
		Message string
		Meta    map[string]map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal(asked, &p); err != nil || p.Message != "Deploy api?" || p.Meta["io.modelcontextprotocol/related-task"]["taskId"] != id {
		t.Errorf("the question %s, want the elicitation tied to %s", asked, id)
	}
	sent := strings.Join(c.peer.take(), "\n")
	if !strings.Contains(sent, `"status":"input_required"`) || !strings.Contains(sent, `"status":"completed"`) {
		t.Errorf("status notifications:\n%s", sent)
	}
}

// TestTasks_ImmediateAnswerSendsItsStatus: an answer that takes no time
// is over before the client hears of its task, yet the client hears how
// it ended: the status follows the answer that makes the task known, as
// it does for a task that takes time, so that a client waiting for it
// rather than polling is not left waiting.
func TestTasks_ImmediateAnswerSendsItsStatus(t *testing.T) {
	s, err := Parse("now.yaml", []byte(`
server: {name: now, version: "1"}
tools:
  - {name: quick, execution: {taskSupport: optional}, answers: [{text: done}]}
  - {name: broken, execution: {taskSupport: optional}, answers: [{error: {code: -32000, message: no}}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	for _, tc := range []struct{ tool, status string }{{"quick", "completed"}, {"broken", "failed"}} {
		r, _ := c.ask("tools/call", map[string]any{"name": tc.tool, "task": map[string]any{}})
		var created struct {
			Task struct{ TaskID, Status string }
		}
		if r.Error != nil || json.Unmarshal(r.Result, &created) != nil || created.Task.Status != "working" {
			t.Fatalf("%s: %+v, want a working task", tc.tool, r)
		}
		if len(r.After) == 0 || r.After[0].Method != "notifications/tasks/status" {
			t.Fatalf("%s: after the answer %+v, want the task's status first", tc.tool, r.After)
		}
		var st struct{ TaskID, Status string }
		if err := json.Unmarshal(r.After[0].Params, &st); err != nil || st.TaskID != created.Task.TaskID || st.Status != tc.status {
			t.Errorf("%s: status %s, want %s %s", tc.tool, r.After[0].Params, created.Task.TaskID, tc.status)
		}
	}
}

// TestTasks_OlderClients: tasks came with 2025-11-25. A client of an
// older version is declared no tasks, and calls every tool plainly, one
// that runs only as a task too; a params.task it sends is ignored.
func TestTasks_OlderClients(t *testing.T) {
	c := newClient(t, mustLoad(t, "script-tasks.yaml"))
	init := c.result("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if init["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize: %v", init)
	}
	if caps := init["capabilities"].(map[string]any); caps["tasks"] != nil || caps["tools"] == nil {
		t.Errorf("capabilities %v, want tools and no tasks", caps)
	}
	if got := firstText(t, c.result("tools/call", map[string]any{"name": "research", "arguments": map[string]any{"topic": "tides"}})); got != "Report on tides: three sources agree." {
		t.Errorf("research (taskSupport required) called plainly: %q", got)
	}
	if res := c.result("tools/call", map[string]any{"name": "convert", "task": map[string]any{}}); res["task"] != nil || firstText(t, res) != "converted" {
		t.Errorf("convert with params.task: %v, want the plain result", res)
	}
}

// TestTasks_InputRequiredWithoutMatchingAnswer: a task whose tool asks
// first chooses its answer on the client's tasks/result, after its call
// was answered (and counted). When none matches, that tasks/result
// gives the script's isError and is marked unmatched, once: a second
// tasks/result of the task is not counted again, nor was the call.
func TestTasks_InputRequiredWithoutMatchingAnswer(t *testing.T) {
	s, err := Parse("ask.yaml", []byte(`
server: {name: ask, version: "1"}
tools:
  - name: deploy
    execution: {taskSupport: required}
    elicit:
      message: Deploy?
      requestedSchema: {type: object, properties: {ok: {type: boolean}}}
    answers:
      - when: {elicited: {action: accept}}
        text: deployed
`))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.peer.answers = func(string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"decline"}`), nil
	}
	created, _ := c.ask("tools/call", map[string]any{"name": "deploy", "arguments": map[string]any{}, "task": map[string]any{}})
	if created.Unmatched {
		t.Error("the call is unmatched before its answer was chosen")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st := c.result("tasks/get", map[string]any{"taskId": "task-1"})["status"]
		if st == "input_required" {
			break
		}
		if st != "working" || time.Now().After(deadline) {
			t.Fatalf("task-1: %v, want input_required", st)
		}
	}
	const want = `mcpmock script: no answer of tool "deploy" matches the arguments {} and the client's answer {"action":"decline"}; nearest: the answer at line 10: elicited.action is "decline", want "accept"`
	for i, wantUnmatched := range []bool{true, false} {
		r, _ := c.ask("tasks/result", map[string]any{"taskId": "task-1"})
		var res map[string]any
		if err := json.Unmarshal(r.Result, &res); err != nil || res["isError"] != true || firstText(t, res) != want {
			t.Fatalf("tasks/result %d: %s %v, want the isError %q", i+1, r.Result, err, want)
		}
		if r.Unmatched != wantUnmatched {
			t.Errorf("tasks/result %d: Unmatched %v, want %v", i+1, r.Unmatched, wantUnmatched)
		}
	}
}

// The why of a task call no answer matches is kept for the engine only
// until it asks (replay.Explainer), once, and nothing is kept for a call
// an answer matches: the side table of a long session stays empty.
func TestSession_WhyUnmatchedOnce(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "task-no-answer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ss := s.(*Script).Open().(*session)
	defer ss.Close()
	prepare := func(id, city string) (*replay.Request, *replay.Prepared) {
		t.Helper()
		req := &replay.Request{ID: json.RawMessage(id), Method: "tools/call",
			Params: json.RawMessage(`{"name":"weather","arguments":{"city":"` + city + `"},"task":{}}`)}
		pr, ok := ss.Prepare(req)
		if !ok || pr.Play != nil {
			t.Fatalf("%s: want an immediate answer, got %+v %v", city, pr, ok)
		}
		return req, pr
	}
	if req, pr := prepare("1", "Oslo"); pr.Reply.Unmatched || len(ss.whys) != 0 || ss.WhyUnmatched(req) != "" {
		t.Errorf("a call an answer matches: unmatched %v, %d whys kept", pr.Reply.Unmatched, len(ss.whys))
	}
	req, pr := prepare("2", "Bergen")
	if !pr.Reply.Unmatched {
		t.Fatalf("a call no answer matches: not unmatched: %+v", pr.Reply)
	}
	const want = `mcpmock script: no answer of tool "weather" matches the arguments {"city":"Bergen"}; nearest: the answer at line 8: arguments.city is "Bergen", want "Oslo"`
	if got := ss.WhyUnmatched(req); got != want {
		t.Errorf("WhyUnmatched = %q, want %q", got, want)
	}
	if got := ss.WhyUnmatched(req); got != "" || len(ss.whys) != 0 {
		t.Errorf("asked again: %q, %d whys kept; want none", got, len(ss.whys))
	}
}
