package replay

import (
	"encoding/json"
)

// Tasks the client runs (2025-11-25): a server may ask its client to
// sample or elicit as a task of the client's (params.task on the request);
// the client answers with a CreateTaskResult, and the server then polls
// the client's task with tasks/get and fetches it with tasks/result, all
// while the tool call that caused it is in flight (server-everything's
// trigger-sampling-request-async). The task ids are the client's: a live
// client makes new ones, so a replay that sent the recorded id would poll
// a task the client never made. So a call's replay learns, from the live
// client's answer to each such request, the id it gave the task the
// recorded answer named, and puts it in place of the recorded one in the
// server requests it sends after (their params.taskId).

// serverAsk locates a server request sent during a call: the call, and
// the request's place in the call's traffic.
type serverAsk struct {
	it *interaction
	i  int
}

// noteClientTask records, when reply (the client's recorded result for
// the server request at ask) made a task of the client's, the task's id
// on that step.
func noteClientTask(ask serverAsk, result json.RawMessage) {
	if id, ok := taskID(fieldOf(result, "task")); ok {
		ask.it.during[ask.i].clientTask = id
	}
}

// clientTaskIDs maps the recorded ids of the client's tasks to the live
// client's, for the server requests of one call.
type clientTaskIDs map[string]json.RawMessage

// learn notes the live client's id for the task recorded as recorded,
// from its live answer (a CreateTaskResult); a client that answered
// without making a task teaches nothing, and the recorded id goes out.
func (m *clientTaskIDs) learn(recorded string, live json.RawMessage) {
	id := fieldOf(fieldOf(live, "task"), "taskId")
	if len(id) == 0 {
		return
	}
	if *m == nil {
		*m = clientTaskIDs{}
	}
	(*m)[recorded] = json.RawMessage(id)
}

// rekey puts the live id in place of a recorded one in params.taskId.
func (m clientTaskIDs) rekey(params json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return params
	}
	recorded, ok := taskID(params)
	if !ok {
		return params
	}
	if live, ok := m[recorded]; ok {
		return withMember(params, "taskId", live)
	}
	return params
}
