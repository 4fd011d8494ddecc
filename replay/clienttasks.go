package replay

import (
	"encoding/json"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
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
// server requests it sends after (their params.taskId). A live client
// that did not declare such tasks is asked without params.task, and the
// recorded task's polls are not sent to it.

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
	if id, ok := taskID(jsonrpc.Member(result, "task")); ok {
		ask.it.during[ask.i].clientTask = id
	}
}

// clientTaskIDs is what one call's replay knows of the client's tasks:
// the live client's id for each recorded one it made again, and the
// recorded ones it did not make (it answered at once, or with an error).
type clientTaskIDs struct {
	live    map[string]json.RawMessage
	notMade map[string]bool
}

// learn notes, from the live client's answer to a request whose recorded
// answer made the task recorded, the id it gave the task; or, when it
// made none, that the recorded task's polls are not to be sent.
func (m *clientTaskIDs) learn(recorded string, answer json.RawMessage, err error) {
	id := jsonrpc.Member(answer, "task", "taskId")
	if err != nil || len(id) == 0 {
		if m.notMade == nil {
			m.notMade = map[string]bool{}
		}
		m.notMade[recorded] = true
		return
	}
	if m.live == nil {
		m.live = map[string]json.RawMessage{}
	}
	m.live[recorded] = json.RawMessage(id)
}

// rekey puts the live id in place of a recorded one in params.taskId.
func (m *clientTaskIDs) rekey(params json.RawMessage) json.RawMessage {
	if len(m.live) == 0 {
		return params
	}
	recorded, ok := taskID(params)
	if !ok {
		return params
	}
	if live, ok := m.live[recorded]; ok {
		return withMember(params, "taskId", live)
	}
	return params
}

// skips says whether a server request about a task (tasks/get,
// tasks/result, tasks/cancel) names one the live client did not make: the
// client answered the request that made it, recorded, without a task. It
// is not sent: the client would not know the id.
func (m *clientTaskIDs) skips(method string, params json.RawMessage) bool {
	if len(m.notMade) == 0 || !strings.HasPrefix(method, "tasks/") {
		return false
	}
	id, ok := taskID(params)
	return ok && m.notMade[id]
}

// asTheClientTakes returns the params of a server request that asked the
// client for a task, as the live client may take them: without
// params.task when its initialize did not declare tasks for the request
// (tasks.requests.sampling.createMessage, …elicitation.create), as the
// spec has a requestor do; then the client answers at once, and the
// recorded task's polls are not sent (skips).
func asTheClientTakes(peer Peer, method string, params json.RawMessage) json.RawMessage {
	h, ok := peer.(ClientHello)
	if !ok {
		return params
	}
	hello := h.ClientHello()
	if hello == nil {
		return params
	}
	if jsonrpc.TakesTasksFor(jsonrpc.Member(hello, "capabilities", "tasks"), method) {
		return params
	}
	return withoutMember(params, "task")
}

// withoutMember is params (an object) without member name.
func withoutMember(params json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m == nil {
		return params
	}
	if _, ok := m[name]; !ok {
		return params
	}
	delete(m, name)
	b, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return b
}
