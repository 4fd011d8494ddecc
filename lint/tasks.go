package lint

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Tasks (2025-11-25, experimental). A receiver that accepts a
// task-augmented request answers with a task; the requestor polls it
// (tasks/get), fetches its result (tasks/result), lists and cancels.
// The checks here: the tool-level negotiation of a task-augmented
// tools/call, each task object's required members, the status
// lifecycle of each task id, and the related-task _meta a tasks/result
// result must carry.

// taskStatuses are the statuses a task may have.
var taskStatuses = []string{"working", "input_required", "completed", "failed", "cancelled"}

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// taskState is what the session showed of one task so far.
type taskState struct {
	status string
	seq    uint64 // where it last showed that status
}

// taskCallRequest checks a tools/call's use of tasks against what the
// server declared: params.task only where the server takes tasks for
// tools/call and the tool's execution.taskSupport is optional or
// required; a required one only with params.task.
func (c *checker) taskCallRequest(f *frame, r *request) {
	if f.dir != store.C2S || r.method != "tools/call" {
		return
	}
	takesTasks := jsonrpc.TakesTasksFor(c.serverCaps["tasks"], "tools/call")
	if r.task && c.serverCapsKnown && !takesTasks {
		c.report("task-support", f.seq, 0, "tools/call %s asks for a task, but the server did not declare tasks.requests.tools.call", r.tool)
		return
	}
	t := c.tools[r.tool]
	if t == nil || !c.toolsListed {
		return
	}
	switch {
	case r.task && t.taskSupport != "optional" && t.taskSupport != "required":
		c.report("task-support", f.seq, 0, "tools/call %s asks for a task, but the tool's execution.taskSupport is %s: a client must not", r.tool, orForbidden(t.taskSupport))
	case !r.task && t.taskSupport == "required" && c.serverCapsKnown && takesTasks:
		c.report("task-support", f.seq, 0, "tools/call %s without params.task, but the tool's execution.taskSupport is required: a client must ask for a task", r.tool)
	}
}

// taskAskRequest checks a server's task-augmented sampling or elicitation
// against what the client declared: params.task only where the client
// takes tasks for that request (tasks.requests.sampling.createMessage,
// tasks.requests.elicitation.create). A SHOULD, where a tools/call's is a
// MUST: a warning.
func (c *checker) taskAskRequest(f *frame, r *request) {
	if r.task && c.clientCapsKnown && !c.takesTask(r) {
		group, name, _ := strings.Cut(r.method, "/")
		c.report("task-ask-support", f.seq, 0, "%s asks for a task, but the client did not declare tasks.requests.%s.%s", r.method, group, name)
	}
}

// takesTask says whether the receiver of task-augmentable request r
// declared that it takes tasks for requests of its kind
// (tasks.requests.tools.call for a server, …sampling.createMessage and
// …elicitation.create for a client).
func (c *checker) takesTask(r *request) bool {
	caps := c.serverCaps
	if r.dir == store.S2C {
		caps = c.clientCaps
	}
	return jsonrpc.TakesTasksFor(caps["tasks"], r.method)
}

// answeredWithTask says whether f, the answer to r, is a CreateTaskResult.
func answeredWithTask(f *frame, r *request) bool {
	return r.task && member(f.result, "task") != nil
}

func orForbidden(s string) string {
	if s == "" {
		return "absent (forbidden)"
	}
	return fmt.Sprintf("%q", s)
}

// taskResult checks the answers about tasks: a task-augmented call's
// CreateTaskResult, tasks/get, tasks/cancel, tasks/list and
// tasks/result.
func (c *checker) taskResult(f *frame, r *request) {
	switch {
	case answeredWithTask(f, r):
		task := member(f.result, "task")
		c.taskObject(f, "the created task", task, true)
		if id, ok := stringOf(member(task, "taskId")); ok && r.method == "elicitation/create" && r.form != nil {
			if c.taskForms == nil {
				c.taskForms = map[string]json.RawMessage{}
			}
			c.taskForms[id] = r.form // its tasks/result gives the content
		}
	case r.task:
		// A receiver that did not declare tasks for the request must
		// answer it as if it had no params.task; one that did, with a
		// task. Whose capabilities are unknown may do either.
		known, receiver := c.serverCapsKnown, "server"
		if r.dir == store.S2C {
			known, receiver = c.clientCapsKnown, "client"
		}
		if known && c.takesTask(r) {
			c.report("task-fields", f.seq, r.seq, "the answer to a task-augmented %s has no task (CreateTaskResult), though the %s takes tasks for it", r.method, receiver)
		}
	case r.method == "tasks/get" || r.method == "tasks/cancel":
		c.taskObject(f, r.method+"'s task", f.result, false)
	case r.method == "tasks/list":
		var list []json.RawMessage
		if json.Unmarshal(member(f.result, "tasks"), &list) != nil {
			c.report("task-fields", f.seq, r.seq, "the tasks/list result has no tasks array")
			return
		}
		for i, t := range list {
			c.taskObject(f, fmt.Sprintf("tasks[%d]", i), t, false)
		}
	case r.method == "tasks/result":
		want := r.target
		got, _ := stringOf(member(member(member(f.result, "_meta"), "io.modelcontextprotocol/related-task"), "taskId"))
		if got != want {
			c.report("task-result-meta", f.seq, r.seq, "the tasks/result result for task %q has %s in _meta io.modelcontextprotocol/related-task; it must name its task", want, orNone(quoted(got)))
		}
		// An elicitation the client ran as a task: its result is the
		// ElicitResult, checked against the form as an answer would be.
		if form := c.taskForms[want]; form != nil && r.dir == store.S2C {
			if a, _ := stringOf(member(f.result, "action")); a == "accept" {
				if problem := formContentProblem(form, member(f.result, "content")); problem != "" {
					c.report("elicitation-content", f.seq, r.seq, "the accepted elicitation's content (the result of the client's task %q) breaks its form: %s", want, problem)
				}
			}
		}
	}
}

// taskStatusNote checks a notifications/tasks/status: the task it
// carries, whole.
func (c *checker) taskStatusNote(f *frame) {
	c.taskObject(f, "notifications/tasks/status's task", f.params, false)
}

// taskObject checks one Task: its required members, and its status
// against what the session showed of the same task before. created: it
// is the task a request just created, which begins working.
func (c *checker) taskObject(f *frame, what string, raw json.RawMessage, created bool) {
	t := objectMembers(raw)
	var missing []string
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"} {
		if _, ok := t[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		c.report("task-fields", f.seq, 0, "%s lacks %v (a task must carry taskId, status, createdAt, lastUpdatedAt and ttl, null for unlimited)", what, missing)
	}
	id, _ := stringOf(t["taskId"])
	status, _ := stringOf(t["status"])
	if id == "" || status == "" {
		return
	}
	if !slices.Contains(taskStatuses, status) {
		c.report("task-status", f.seq, 0, "task %q has status %q, which is none of %v", id, status, taskStatuses)
		return
	}
	if c.tasks == nil {
		c.tasks = map[string]*taskState{}
	}
	prev := c.tasks[id]
	switch {
	case created && status != "working":
		c.report("task-status", f.seq, 0, "task %q begins %s; a task must begin working", id, status)
	case created && prev != nil:
		// Heard of before the answer that created it: over HTTP a
		// receiver's notifications/tasks/status and its answer travel on
		// requests of their own (the client's POSTs), read in either
		// order. The creation tells the task as it began, before what was
		// seen of it; it moves nothing back.
		return
	case prev != nil && terminalStatus(prev.status) && status != prev.status:
		c.report("task-status", f.seq, prev.seq, "task %q is %s after it was %s at #%d, a terminal status it must keep", id, status, prev.status, prev.seq)
		return // judge what follows against the terminal status
	}
	if prev == nil || prev.status != status {
		c.tasks[id] = &taskState{status: status, seq: f.seq}
	}
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%q", s)
}
