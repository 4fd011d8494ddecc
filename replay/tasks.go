package replay

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcptape/mcptape/internal/jsonrpc"
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
// (its CreateTaskResult, a poll, its result, a cancel, a list). A poll
// whose recorded answer lies before that point is answered with the
// latest state the recording shows of the task up to it: a poll's answer,
// a notifications/tasks/status, the task in the CreateTaskResult, in a
// cancel's answer or in a list; a list lists such a task so. A task never
// goes back, and the replay stays deterministic: it depends on what was
// asked, in order, not on time.

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
	// lists are the tasks each tasks/list answer names, in its order
	// (nil for one it names no recorded session's task in).
	lists map[*interaction][]taskKey
	// created says which tasks the recorded session made itself (a
	// CreateTaskResult answered one of its calls): a live session that
	// has not made such a task yet is not told of it.
	created map[taskKey]bool
	// results are each task's first recorded tasks/result.
	results map[taskKey]*interaction
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
		k, ok = t.noteOutcome(it)
	case it.method == "tasks/list":
		t.noteList(it, seq, result)
		return
	case taskPresenceOnly(it.method) && bytes.Contains(result, []byte(`"taskId"`)):
		// A CreateTaskResult: {"task": Task}.
		if task := jsonrpc.Member(result, "task"); task != nil {
			if k, ok = t.noteState(it.sess, seq, task); ok {
				if t.created == nil {
					t.created = map[taskKey]bool{}
				}
				t.created[k] = true
			}
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

// noteOutcome records it, a tasks/result answered (with a result or an
// error), as the outcome of the task it names, if it is the first
// recorded; it returns the task.
func (t *tasks) noteOutcome(it *interaction) (taskKey, bool) {
	var id string
	if json.Unmarshal(jsonrpc.Member(it.canonBytes(), "taskId"), &id) != nil || id == "" {
		return taskKey{}, false
	}
	k := taskKey{it.sess, id}
	if t.results == nil {
		t.results = map[taskKey]*interaction{}
	}
	if t.results[k] == nil {
		t.results[k] = it
	}
	return k, true
}

// noteList records the tasks a tasks/list answer (ListTasksResult) names,
// as states of theirs at seq.
func (t *tasks) noteList(it *interaction, seq uint64, result json.RawMessage) {
	var list struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	if json.Unmarshal(result, &list) != nil || len(list.Tasks) == 0 {
		return
	}
	keys := make([]taskKey, len(list.Tasks))
	for i, task := range list.Tasks {
		keys[i], _ = t.noteState(it.sess, seq, task) // zero: no taskId
	}
	if t.lists == nil {
		t.lists = map[*interaction][]taskKey{}
	}
	t.lists[it] = keys
	if t.refs == nil {
		t.refs = map[*interaction]taskRef{}
	}
	t.refs[it] = taskRef{at: seq}
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
	if json.Unmarshal(jsonrpc.Member(task, "taskId"), &id) != nil || id == "" {
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
	if keys, ok := s.c.tasks.lists[it]; ok {
		return s.planList(it, ref.at, keys)
	}
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

// planList is planTask for a tasks/list answer recorded at seq, naming
// keys: a task the session's view has taken past seq is listed as the
// recording shows it at the point reached, not as the list did; one the
// recorded session made and the live one has not (it made fewer calls,
// or lists first) is left out; the others move the view on to seq, as a
// poll would.
func (s *cassetteSession) planList(it *interaction, seq uint64, keys []taskKey) *Prepared {
	var fresher map[int]json.RawMessage
	var moved []taskKey
	s.mu.Lock()
	if s.taskAt == nil {
		s.taskAt = map[taskKey]uint64{}
	}
	for i, k := range keys {
		switch reached := s.taskAt[k]; {
		case k.id == "": // an entry without a taskId
		case reached == 0 && s.c.tasks.created[k]:
			if fresher == nil {
				fresher = map[int]json.RawMessage{}
			}
			fresher[i] = nil // not made yet, live
		case reached > seq:
			if task := s.c.tasks.latest(k, reached); task != nil {
				if fresher == nil {
					fresher = map[int]json.RawMessage{}
				}
				fresher[i] = task
			}
		case reached < seq:
			s.taskAt[k] = seq
			moved = append(moved, k)
		}
	}
	s.mu.Unlock()
	for _, k := range moved {
		s.c.tasks.passed(k, seq)
	}
	p := s.plan(it)
	if fresher == nil {
		return p
	}
	return withResult(p, func(r json.RawMessage) json.RawMessage { return relisted(r, fresher) })
}

// withResult is p with its result rewritten by f, whether p answers at
// once or plays first.
func withResult(p *Prepared, f func(json.RawMessage) json.RawMessage) *Prepared {
	q := *p
	q.Reply.Result = f(p.Reply.Result)
	if play := p.Play; play != nil {
		q.Play = func(ctx context.Context, peer Peer, req *Request) Reply {
			r := play(ctx, peer, req)
			if r.Result != nil {
				r.Result = f(r.Result)
			}
			return r
		}
	}
	return &q
}

// relisted is a ListTasksResult with the tasks at the given places
// replaced, or left out where fresher holds nil for them; anything it
// cannot read it leaves as it is.
func relisted(result json.RawMessage, fresher map[int]json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	var list []json.RawMessage
	if json.Unmarshal(result, &m) != nil || json.Unmarshal(m["tasks"], &list) != nil {
		return result
	}
	kept := list[:0:0]
	for i, task := range list {
		fresh, ok := fresher[i]
		switch {
		case !ok:
			kept = append(kept, task)
		case fresh != nil:
			kept = append(kept, fresh)
		}
	}
	list = kept
	// Both values were read just now, so both write back.
	m["tasks"], _ = json.Marshal(list)
	if out, err := json.Marshal(m); err == nil {
		return out
	}
	return result
}
