package replay

import (
	"context"
	"encoding/json"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// A 2026-07-28 client calls a tool plainly: that version has no tasks,
// and its tools/call no task member. A recording made with a 2025-11-25
// host may hold the same call made as a task only (params.task answered
// with a CreateTaskResult, then tasks/get polls and tasks/result), whose
// CreateTaskResult such a client could not use. Yet it is a recording of
// the same call, and the tool's real result is on tape: the tasks/result
// answer. A server of 2026-07-28 would have answered the call with it. So
// such a call is answered with the recorded task's result, as recorded
// (an error too), without the related-task _meta that ties it to a task
// the client never heard of, with what the server sent while that fetch
// waited except the task's status notifications. A recording that never
// fetched the task's result but saw the task fail (a poll, or a status
// notification, with status failed) answers the call as the task ended:
// an isError result with the task's statusMessage, as mcpspy export
// --script answers it too (FailedTaskResult). Any other recording that
// never fetched the task's result has no answer for it: the call is
// unmatched.

// Its tasks/result answer carries the task's id in this _meta key
// (2025-11-25 schema, RELATED_TASK_META_KEY).
const metaRelatedTaskKey = "io.modelcontextprotocol/related-task"

const taskStatusMethod = "notifications/tasks/status"

// isPlainCallOf2026 says whether req is a tools/call of 2026-07-28, which
// is never made as a task.
func isPlainCallOf2026(req *Request) bool {
	return req.ID != nil && req.Method == "tools/call" && statelessMeta(req.Params) && jsonrpc.Member(req.Params, "task") == nil
}

// asTaskCall is req as the same call made as a task: matching counts
// params.task by its presence alone (canon.go), so it matches a recorded
// task call of the same tool and arguments.
func asTaskCall(req *Request) *Request {
	p := trimWS(req.Params)
	task := *req
	if string(p) == "{}" || len(p) < 2 || p[0] != '{' {
		task.Params = json.RawMessage(`{"task":{}}`)
	} else {
		task.Params = append(json.RawMessage(`{"task":{},`), p[1:]...)
	}
	return &task
}

// planTaskOutcome answers a 2026-07-28 request matched to call, a call
// recorded as a task (ref): with the task's recorded tasks/result answer,
// else with its failure when the recording last shows it failed, else
// nil. The fetch and the polls before it count as used: the client had
// the outcome they were for.
func (s *cassetteSession) planTaskOutcome(call *interaction, ref taskRef) *Prepared {
	fetch := s.c.tasks.results[ref.key]
	if fetch == nil {
		return s.planTaskFailure(ref)
	}
	markUsed(fetch)
	s.c.tasks.passed(ref.key, fetch.seq)
	p := s.plan(fetch)
	q := *p
	q.Reply = asPlainAnswer(p.Reply)
	if play := p.Play; play != nil {
		q.Play = func(ctx context.Context, peer Peer, req *Request) Reply {
			return asPlainAnswer(play(ctx, untasked{peer}, req))
		}
	}
	return &q
}

// planTaskFailure answers a plain call of task ref, whose result the
// recording never fetched, when the last state it shows of the task is
// failed (the TypeScript SDK's client fetches no result of a failed
// task); nil otherwise.
func (s *cassetteSession) planTaskFailure(ref taskRef) *Prepared {
	states := s.c.tasks.states[ref.key]
	if len(states) == 0 {
		return nil
	}
	last := states[len(states)-1]
	result, ok := FailedTaskResult(last.task)
	if !ok {
		return nil
	}
	s.c.tasks.passed(ref.key, last.seq)
	return &Prepared{Reply: Reply{Result: result}}
}

// FailedTaskResult is what a tools/call run as a task (2025-11-25)
// answers when task, a Task object (as tasks/get answers and
// notifications/tasks/status tells), says it failed: an isError
// CallToolResult whose text is the task's statusMessage, or says that it
// failed when there is none. ok is false for a task in any other status.
// A replay answers so a 2026-07-28 client's plain call of it, and mcpspy
// export --script the tool's call, when no one fetched its tasks/result.
func FailedTaskResult(task json.RawMessage) (result json.RawMessage, ok bool) {
	var st struct {
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage"`
	}
	if json.Unmarshal(task, &st) != nil || st.Status != "failed" {
		return nil, false
	}
	text := st.StatusMessage
	if text == "" {
		text = "the task failed while recording"
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	result, err := json.Marshal(struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError"`
	}{[]content{{"text", text}}, true})
	return result, err == nil
}

// asPlainAnswer is a tasks/result reply as the answer to the call itself:
// without the related-task _meta, nor the task's status notifications
// after it.
func asPlainAnswer(r Reply) Reply {
	if r.Result != nil {
		r.Result = pruned(r.Result, func(name, v []byte) []byte {
			if string(name) == "_meta" {
				return prunedMetaOf(v, metaRelatedTaskKey)
			}
			return v
		})
	}
	var after []Outgoing
	for _, o := range r.After {
		if o.Request || o.Method != taskStatusMethod {
			after = append(after, o)
		}
	}
	if len(after) < len(r.After) {
		r.After = after
	}
	return r
}

// untasked is a Peer that drops the status notifications of a task the
// client never made.
type untasked struct{ Peer }

func (p untasked) Notify(method string, params json.RawMessage) error {
	if method == taskStatusMethod {
		return nil
	}
	return p.Peer.Notify(method, params)
}

func (p untasked) NotifySession(method string, params json.RawMessage) error {
	if method == taskStatusMethod {
		return nil
	}
	return p.Peer.NotifySession(method, params)
}
