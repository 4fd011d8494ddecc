package rerun

import (
	"bytes"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Tasks (2025-11-25): a server that runs a tools/call as a task answers
// with a task id of its own making, and the client names that id in its
// tasks/get, tasks/result and tasks/cancel. The recorded requests name the
// recorded server's ids, which today's server never gave: sent as they
// stand, every poll would be refused (-32602, no such task) and every
// task would show as changed. So, as for a retry's requestState
// (state.go), the rerun sends those requests with the id the live server
// gave for the same call in place of the recorded one; nothing else of
// the frame changes, and nothing when the live server gave the same id.

// rawMember is the value of the member at path in a JSON object, as
// written; nil when there is none.
func rawMember(b []byte, path ...string) []byte {
	for _, name := range path {
		var next []byte
		jsonrpc.RawMembers(b, func(key, value []byte) {
			if string(key) == `"`+name+`"` {
				next = value
			}
		})
		if next == nil {
			return nil
		}
		b = next
	}
	return b
}

// createdTaskOf is the task id a recorded answer created, as written
// (result.task.taskId), or nil.
func createdTaskOf(answer []byte) []byte { return rawMember(answer, "result", "task", "taskId") }

// namedTaskOf is the task id a client's tasks/get, tasks/result or
// tasks/cancel names (params.taskId), or nil for any other frame.
func namedTaskOf(method string, frame []byte) []byte {
	switch method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		return rawMember(frame, "params", "taskId")
	}
	return nil
}

// noteLiveTask keeps the task id a live answer created for a request
// whose recorded answer created one, for the requests that name it.
func (d *driver) noteLiveTask(id string, frame []byte) {
	recorded, ok := d.createdTask[id]
	if !ok {
		return
	}
	delete(d.createdTask, id)
	if live := createdTaskOf(frame); live != nil {
		d.liveTask[string(recorded)] = live
	}
}

// taskFrame is frame with the live task id in place of the recorded one
// st names, if the live server gave another.
func (d *driver) taskFrame(st *step, frame []byte) []byte {
	if st.namesTask == nil {
		return frame
	}
	d.mu.Lock()
	live := d.liveTask[string(st.namesTask)]
	d.mu.Unlock()
	if live == nil || bytes.Equal(live, st.namesTask) {
		return frame
	}
	out, _, _ := jsonrpc.ReplaceMembers(frame, func(path []string, name string) bool {
		return len(path) == 1 && path[0] == "params" && name == "taskId"
	}, live)
	return out
}
