package script

import (
	"encoding/json"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// A tools/call the server ran as a task (2025-11-25) is answered twice
// on the wire: at once with the task (CreateTaskResult), and later, to
// the client's tasks/result, with what the call would have answered. The
// script wants the second, as the tool's answer: the script runs the
// call as a task again when the client asks for one, since the tool's
// listed execution.taskSupport goes into the script as recorded.

// recordedTasks are a session's task-run calls by task id.
type recordedTasks map[string]*exchange

// answer takes a response to x that is about a task: the task a
// tools/call created, or a tasks/get's state of one; it says whether it
// was (and the response is no answer of the call's).
func (ts recordedTasks) answer(x *exchange, result, rpcErr json.RawMessage, at time.Time) bool {
	if len(rpcErr) > 0 {
		return false
	}
	switch x.method {
	case "tools/call":
		var created struct {
			Task *struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(x.params, &p) != nil || len(p.Task) == 0 || string(p.Task) == "null" ||
			json.Unmarshal(result, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
			return false
		}
		ts[created.Task.TaskID] = x
		return true
	case "tasks/get":
		var st struct {
			TaskID string `json:"taskId"`
		}
		if failed, ok := replay.FailedTaskResult(result); ok && json.Unmarshal(result, &st) == nil {
			if call := ts[st.TaskID]; call != nil && !call.answered {
				call.taskFailed, call.done = failed, at
			}
		}
		return true
	}
	return false
}

// resultOf is the call whose task's result the tasks/result x asked for
// came, answered with it: the result without the _meta that ties it to
// the task (the script's task adds its own), or the error. nil when x
// names no task of the session's.
func (ts recordedTasks) resultOf(x *exchange, result, rpcErr json.RawMessage, at time.Time) *exchange {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(x.params, &p) != nil {
		return nil
	}
	call := ts[p.TaskID]
	if call == nil || call.answered {
		return nil
	}
	call.result, call.err, call.answered, call.done = untied(result), rpcErr, true, at
	return call
}

// untied is a task's result without io.modelcontextprotocol/related-task
// in its _meta (and without a _meta left empty).
func untied(result json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil || m == nil {
		return result
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(m["_meta"], &meta) != nil || meta == nil {
		return result
	}
	delete(meta, relatedTask)
	if len(meta) == 0 {
		delete(m, "_meta")
	} else {
		m["_meta"] = mustJSON(meta)
	}
	return mustJSON(m)
}

// failed answers a call whose task failed, as tasks/get said, and whose
// result no one asked for (the TypeScript SDK client asks none of a
// failed task): an isError result with the task's statusMessage, as a
// replay answers a 2026-07-28 client's plain call of it.
func (ts recordedTasks) failed(x *exchange) {
	if x.answered || x.taskFailed == nil {
		return
	}
	x.result, x.answered = x.taskFailed, true
}
