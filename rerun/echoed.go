package rerun

import (
	"bytes"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Values the server makes afresh each run, which the client's later
// requests echo. The recorded requests echo the recorded server's; sent
// as they stand, today's server would refuse them, and every request that
// carries one would show as changed. So the rerun sends such a request
// with the value the live server gave in its place, for the same request
// of the recording, as a live client would; it changes nothing else of
// the frame, and nothing when the live server gave the same value or none.
//
//   - Multi round-trip requests (2026-07-28, SEP-2322): a server that
//     needs input answers a call with resultType input_required and an
//     opaque requestState (a signature, a time, a key of its own run),
//     and the client sends the call again with the input and that
//     requestState.
//   - Tasks (2025-11-25): a server that runs a tools/call as a task
//     answers with a task id of its own making, and the client names it
//     in its tasks/get, tasks/result and tasks/cancel (else refused:
//     -32602, no such task).

// echoed is one kind of such value: where an answer gives it, and which
// params member of a later request echoes it.
type echoed struct {
	answer []string
	param  string
}

var echoedValues = [...]echoed{
	{answer: []string{"result", "requestState"}, param: "requestState"},
	{answer: []string{"result", "task", "taskId"}, param: "taskId"},
}

// echoes holds a value of each kind, as written; nil where none.
type echoes [len(echoedValues)][]byte

// any says whether e holds a value.
func (e echoes) any() bool {
	for _, v := range e {
		if v != nil {
			return true
		}
	}
	return false
}

// gaveOf is what an answer gives of each kind.
func gaveOf(answer []byte) (e echoes) {
	for i, v := range echoedValues {
		e[i] = jsonrpc.Member(answer, v.answer...)
	}
	return e
}

// echoedBy is what a request's params echo of each kind.
func echoedBy(frame []byte) (e echoes) {
	for i, v := range echoedValues {
		e[i] = jsonrpc.Member(frame, "params", v.param)
	}
	return e
}

// noteLive keeps what a live answer gives in place of what the recorded
// answer to the same request gave, for the requests that echo it.
func (d *driver) noteLive(id string, frame []byte) {
	recorded, ok := d.gave[id]
	if !ok {
		return
	}
	delete(d.gave, id)
	live := gaveOf(frame)
	for i := range echoedValues {
		if recorded[i] != nil && live[i] != nil {
			d.live[i][string(recorded[i])] = live[i]
		}
	}
}

// frameFor is what to send for st: its recorded frame, with the values
// it echoes that the live server gave otherwise in their place.
func (d *driver) frameFor(st *step) []byte {
	frame := st.frame
	for i, v := range echoedValues {
		if st.echoes[i] == nil {
			continue
		}
		d.mu.Lock()
		live := d.live[i][string(st.echoes[i])]
		d.mu.Unlock()
		if live == nil || bytes.Equal(live, st.echoes[i]) {
			continue
		}
		frame, _, _ = jsonrpc.ReplaceMembers(frame, func(path []string, name string) bool {
			return len(path) == 1 && path[0] == "params" && name == v.param
		}, live)
	}
	return frame
}
