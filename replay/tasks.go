package replay

import (
	"bytes"
	"encoding/json"
)

// Tasks (2025-11-25, SEP-1686). A call made with params.task is answered
// with a CreateTaskResult; the client then polls tasks/get {taskId} until
// the task ends, fetches tasks/result, and may ask tasks/list or
// tasks/cancel. The ids are the server's: a replay hands out the recorded
// ones, so the client's later requests carry them and match as usual.
//
// Polls are identical requests, answered in recorded order, the last
// again once they run out. That replays a recording faithfully to a host
// that polls as the recorded one did, but not to one that polls less, or
// later: a host that calls tasks/result at once (which, live, waits for
// the task to end) and then tasks/get would get the recording's second
// poll, "working", for a task whose result it already has. So each live
// session follows how far each recorded task has got in what it was
// given: the point in the recording of the latest answer about the task
// (its CreateTaskResult, a poll, its result, a cancel). A poll whose
// recorded answer lies before that point is answered with the latest
// state the recording shows of the task up to it: a poll's answer, a
// notifications/tasks/status, the task in the CreateTaskResult or in a
// cancel's answer. A task never goes back, and the replay stays
// deterministic: it depends on what was asked, in order, not on time.

// taskKey names a recorded task: the ids are the server's, unique within
// the session that made them.
type taskKey struct{ sess, id string }

// taskState is a task as the recording shows it at seq.
type taskState struct {
	seq  uint64
	task json.RawMessage // a Task: a tasks/get result as it stands
}

// taskRef is the task an interaction's answer is about, and where in its
// recorded session that answer lies.
type taskRef struct {
	key taskKey
	at  uint64
}

// tasks is what a cassette knows of the recorded tasks.
type tasks struct {
	states map[taskKey][]taskState // in recorded order
	refs   map[*interaction]taskRef
	polls  map[taskKey][]*interaction // each task's tasks/get, in recorded order
}

// noteState records that the recording shows task (a Task object) at seq.
func (t *tasks) noteState(sess string, seq uint64, task json.RawMessage) (taskKey, bool) {
	id, ok := taskID(task)
	if !ok {
		return taskKey{}, false
	}
	k := taskKey{sess, id}
	if t.states == nil {
		t.states = map[taskKey][]taskState{}
	}
	t.states[k] = append(t.states[k], taskState{seq: seq, task: task})
	return k, true
}

// noteAnswer records what the answer (result) to it, at seq, tells about
// a task, if anything.
func (t *tasks) noteAnswer(it *interaction, seq uint64, result json.RawMessage) {
	var k taskKey
	var ok bool
	switch {
	case it.method == "tasks/get" || it.method == "tasks/cancel":
		// Both answer with the task (GetTaskResult, CancelTaskResult).
		k, ok = t.noteState(it.sess, seq, result)
	case it.method == "tasks/result":
		// The task's own result: the task has ended by then.
		var id string
		if json.Unmarshal(fieldOf([]byte(it.canon()), "taskId"), &id) == nil && id != "" {
			k, ok = taskKey{it.sess, id}, true
		}
	case taskPresenceOnly(it.method) && bytes.Contains(result, []byte(`"taskId"`)):
		// A CreateTaskResult: {"task": Task}.
		if task := fieldOf(result, "task"); task != nil {
			k, ok = t.noteState(it.sess, seq, task)
		}
	}
	if !ok {
		return
	}
	if t.refs == nil {
		t.refs = map[*interaction]taskRef{}
	}
	t.refs[it] = taskRef{key: k, at: seq}
	if it.method == "tasks/get" {
		if t.polls == nil {
			t.polls = map[taskKey][]*interaction{}
		}
		t.polls[k] = append(t.polls[k], it)
	}
}

// passed marks the polls of task k answered at or before seq used: a
// host that has the task's later state had nothing to ask them for (it
// fetched the result early, or polls less often than the recorded one),
// so they are not reported unused, and --strict does not fail on them.
func (t *tasks) passed(k taskKey, seq uint64) {
	for _, it := range t.polls[k] {
		if t.refs[it].at > seq {
			return
		}
		markUsed(it)
	}
}

// latest returns the latest state of task k recorded at or before seq.
func (t *tasks) latest(k taskKey, seq uint64) json.RawMessage {
	var out json.RawMessage
	for _, st := range t.states[k] {
		if st.seq > seq {
			break
		}
		out = st.task
	}
	return out
}

// taskID reads a Task object's taskId.
func taskID(task json.RawMessage) (string, bool) {
	var id string
	if json.Unmarshal(fieldOf(task, "taskId"), &id) != nil || id == "" {
		return "", false
	}
	return id, true
}

// planTask is plan for an interaction whose answer is about a task (ref):
// it moves the session's view of the task on, or, for a poll whose
// recorded answer that view has passed, answers with the task as the
// recording shows it at the point reached. The recorded poll's own
// traffic is not sent then: it told of states the task has left.
func (s *cassetteSession) planTask(it *interaction, ref taskRef) *Prepared {
	s.mu.Lock()
	reached := s.taskAt[ref.key]
	if it.method == "tasks/get" && ref.at < reached {
		task := s.c.tasks.latest(ref.key, reached)
		s.mu.Unlock()
		if task != nil {
			return &Prepared{Reply: Reply{Result: task}}
		}
		return s.plan(it)
	}
	if s.taskAt == nil {
		s.taskAt = map[taskKey]uint64{}
	}
	s.taskAt[ref.key] = max(reached, ref.at)
	s.mu.Unlock()
	if ref.at > reached {
		s.c.tasks.passed(ref.key, ref.at)
	}
	return s.plan(it)
}
