package script

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// Tasks (2025-11-25, experimental): a client may call a tool whose
// execution.taskSupport is optional or required with params.task. The
// call is answered at once with the task (CreateTaskResult); the tool's
// answer plays in the background, its delay, progress and logs as they
// would in a call, and becomes the task's result: tasks/get tells how far
// it is, tasks/result waits for it, tasks/list and tasks/cancel do what
// they say. A tool that asks the client first waits, input_required,
// for a tasks/result to ask on. Task ids are task-1, task-2, … in the
// order the calls came, so that runs are alike. A task lives as long as
// its session.

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// taskPollInterval is the pollInterval every task suggests: short, as a
// mock's tasks are, so that a client under test does not wait long.
const taskPollInterval = 100 * time.Millisecond

// relatedTask is the _meta key that ties a message to its task.
const relatedTask = "io.modelcontextprotocol/related-task"

// task is one task-augmented call.
type task struct {
	id      string
	created time.Time
	ttl     json.RawMessage // the client's requested ttl, or null: kept as long as the session

	mu      sync.Mutex
	status  string
	message string // statusMessage, if any
	updated time.Time
	reply   replay.Reply // the call's answer, once completed or failed
	// chosenLate: the answer may be chosen after the call was answered
	// (the tool asks the client first, on a tasks/result). If none
	// matches, the first tasks/result to give that reply counts as
	// unmatched, the call having been counted already.
	chosenLate bool
	done       chan struct{} // closed when the status is terminal
	cancel     context.CancelFunc
	// asker hands the task, while it needs input, the peer of a
	// tasks/result waiting for it: the questions go on that request, as
	// the spec has it (input_required).
	asker chan replay.Peer
}

// tasks are a session's tasks, in the order they were created.
type tasks struct {
	mu   sync.Mutex
	list []*task
	byID map[string]*task
}

func (ts *tasks) add(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID == nil {
		ts.byID = map[string]*task{}
	}
	ts.list = append(ts.list, t)
	t.id = fmt.Sprintf("task-%d", len(ts.list))
	ts.byID[t.id] = t
}

func (ts *tasks) get(id string) *task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.byID[id]
}

func (ts *tasks) all() []*task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]*task(nil), ts.list...)
}

// cancelAll ends what the session's tasks are still doing (the session
// is over).
func (ts *tasks) cancelAll() {
	for _, t := range ts.all() {
		t.cancel()
	}
}

// state is the task as the protocol shows it (Task).
func (t *task) state() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
		"ttl":           t.ttl,
		"pollInterval":  taskPollInterval.Milliseconds(),
	}
	if t.message != "" {
		st["statusMessage"] = t.message
	}
	return st
}

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// finish moves a working task to status; it says whether it did (a
// cancelled task stays cancelled whatever its answer does after). The
// caller then closes t.done: tasks/result waits for that.
func (t *task) finish(status, message string, reply replay.Reply) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != taskWorking {
		return false
	}
	t.status, t.message, t.reply, t.updated = status, message, reply, time.Now()
	return true
}

// taskCall decides how a tools/call of t runs where the script declares
// tasks: as a task (true), as a call (false), or not at all (the error
// the spec asks for, in refuse).
func (ss *session) taskCall(c *call, t *tool) (asTask bool, refuse *replay.Reply) {
	if !ss.s.tasks || c.stateless {
		return false, nil // no tasks declared: params.task is ignored, as the spec asks
	}
	if v := ss.speaks(); v != "" && v < tasksVersion {
		// A client of a version before tasks was declared none: it
		// calls every tool plainly, a required one too.
		return false, nil
	}
	raw, sent := c.params["task"]
	sent = sent && string(raw) != "null"
	switch {
	case sent && t.taskSupport != taskOptional && t.taskSupport != taskRequired:
		r := errReply(codeMethodNotFound, fmt.Sprintf("tools/call %s: this tool does not run as a task (its execution.taskSupport is %s): call it without params.task", t.name, orForbidden(t.taskSupport)), nil)
		return false, &r
	case !sent && t.taskSupport == taskRequired:
		r := errReply(codeMethodNotFound, fmt.Sprintf("tools/call %s: this tool runs only as a task (its execution.taskSupport is required): call it with params.task", t.name), nil)
		return false, &r
	}
	return sent, nil
}

func orForbidden(s string) string {
	if s == "" {
		return "absent, which means forbidden"
	}
	return s
}

// callAsTask answers a task-augmented tools/call: the answer is chosen
// now, as for a call (q), and plays as a task (startTask).
func (ss *session) callAsTask(ctx context.Context, peer replay.Peer, c *call, q questions) (replay.Reply, bool) {
	prepare := c.prepare
	c.prepare = true // what takes time comes back as c.play, to run in the background
	reply, ok := ss.askFirst(ctx, peer, c, q)
	play := c.play
	c.prepare, c.play = prepare, nil
	if !ok {
		return reply, false
	}
	return ss.startTask(c, peer, reply, play)
}

// startTask creates the task for call c, answered at once with it; the
// answer (reply, or play when it takes time) goes on in the background.
// The task is created, and answered, in the order calls come; play needs
// a peer of the session, so when the call is prepared (c.prepare) the
// engine starts it once the task is written (c.background, handed over
// by Background): nothing of the task's reaches the client before the
// task itself.
func (ss *session) startTask(c *call, peer replay.Peer, reply replay.Reply, play func(context.Context, replay.Peer) replay.Reply) (replay.Reply, bool) {
	ttl := json.RawMessage("null")
	var p struct {
		TTL json.RawMessage `json:"ttl"`
	}
	if json.Unmarshal(c.params["task"], &p) == nil && len(p.TTL) > 0 {
		ttl = p.TTL
	}
	now := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{created: now, updated: now, ttl: ttl, status: taskWorking, done: make(chan struct{}), cancel: cancel, asker: make(chan replay.Peer), chosenLate: play != nil}
	ss.tasks.add(t)
	created := resultReply(map[string]any{"task": t.state()})
	created.After = reply.After // what the call fires (events) follows its answer
	switch {
	case play == nil:
		// Over before the client hears of it, so that its first
		// tasks/get finds it done on every run. Its status follows the
		// answer that makes the task known (before what the call
		// fires), as a task that took time sends it when it ends, so
		// that a client waiting for it rather than polling hears it.
		ss.runTask(ctx, t, nil, func(context.Context, replay.Peer) replay.Reply { return reply })
		status := replay.Outgoing{Method: "notifications/tasks/status", Params: mustJSON(t.state())}
		created.After = append([]replay.Outgoing{status}, reply.After...)
		// The task ends with the script's "no answer matches", as the
		// call would have: the call is as unmatched as it would be, and
		// for the same reason, which the task it is answered with does
		// not say. (Its tasks/result is not: taskResult makes a reply of
		// its own.)
		created.Unmatched = reply.Unmatched
		if reply.Unmatched {
			c.why = isErrorText(reply)
		}
		return created, true
	}
	if !c.prepare {
		go ss.runTask(ctx, t, peer, play)
		return created, true
	}
	c.background = func(session context.Context, peer replay.Peer) {
		stop := context.AfterFunc(session, t.cancel) // the session ends: so does the task
		defer stop()
		ss.runTask(ctx, t, peer, play)
	}
	return created, true
}

// isErrorText is the text of r, a tool's isError result (the script's
// "no answer matches"): its first text block.
func isErrorText(r replay.Reply) string {
	var res struct {
		Content []struct{ Type, Text string }
	}
	_ = json.Unmarshal(r.Result, &res)
	for _, b := range res.Content {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// runTask plays the task's answer and records how it ended.
func (ss *session) runTask(ctx context.Context, t *task, peer replay.Peer, play func(context.Context, replay.Peer) replay.Reply) {
	defer t.cancel()
	r := play(ctx, &taskPeer{Peer: peer, task: t})
	if ctx.Err() != nil {
		return // cancelled, or the session ended
	}
	status, message := taskCompleted, ""
	var res struct {
		IsError bool `json:"isError"`
	}
	switch {
	case r.NoReply && !r.CloseAfter:
		return // fault hang: the task never ends
	case r.Error != nil:
		status, message = taskFailed, r.Error.Message
	case r.Result == nil:
		message = "mcpmock script: this answer's fault means nothing in a task (it is about a call's own answer on the wire); the task fails instead"
		status, r = taskFailed, errReply(codeInternal, message, nil)
	case json.Unmarshal(r.Result, &res) == nil && res.IsError:
		status = taskFailed // the spec: a tool's isError result fails its task
	}
	if !t.finish(status, message, r) {
		return
	}
	if peer != nil {
		// Optional in the spec; it spares a client its next poll. Sent
		// before tasks/result is answered, so that a client that waits
		// on it has heard the status first, on every run.
		_ = peer.NotifySession("notifications/tasks/status", mustJSON(t.state()))
	}
	close(t.done)
}

// taskPeer is the peer of a task's answer once its call was answered:
// what the answer sends goes to the session, tied to the task. A question
// for the client (elicit, sample, roots) moves the task to input_required
// and waits for the client's tasks/result, which the spec has a client
// send on seeing that status, and is put on that request's stream.
type taskPeer struct {
	replay.Peer // nil for an answer that needs no peer
	task        *task
}

func (p *taskPeer) Notify(method string, params json.RawMessage) error {
	if p.Peer == nil {
		return fmt.Errorf("mcpmock: no session to send %s on", method)
	}
	return p.Peer.NotifySession(method, withRelatedTask(params, p.task.id))
}

func (p *taskPeer) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method == "ping" {
		// The progress barrier's: a task's progress races no answer.
		return nil, fmt.Errorf("mcpmock does not ping from a task")
	}
	t := p.task
	if !p.move(taskWorking, taskInputRequired) {
		return nil, fmt.Errorf("task %s is %s", t.id, t.statusNow())
	}
	var asked replay.Peer
	select {
	case asked = <-t.asker:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res, err := asked.Call(ctx, method, withRelatedTask(params, t.id))
	p.move(taskInputRequired, taskWorking)
	return res, err
}

// move changes the task's status from one to another, saying so on the
// session; false if it was not in from (cancelled meanwhile).
func (p *taskPeer) move(from, to string) bool {
	t := p.task
	t.mu.Lock()
	if t.status != from {
		t.mu.Unlock()
		return false
	}
	t.status, t.updated = to, time.Now()
	t.mu.Unlock()
	if p.Peer != nil {
		_ = p.Peer.NotifySession("notifications/tasks/status", mustJSON(t.state()))
	}
	return true
}

func (t *task) statusNow() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// withRelatedTask is params with _meta io.modelcontextprotocol/related-task
// naming task id, as a request a task makes must carry.
func withRelatedTask(params json.RawMessage, id string) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(params, &m) != nil || m == nil {
		m = map[string]any{}
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[relatedTask] = map[string]any{"taskId": id}
	m["_meta"] = meta
	return mustJSON(m)
}

// taskRequest answers tasks/get, tasks/result, tasks/list and
// tasks/cancel; ok is false when the script declares no tasks (the
// methods are then as unknown as any other), or serves only part of the
// server and has no such task.
func (ss *session) taskRequest(ctx context.Context, peer replay.Peer, c *call) (replay.Reply, bool) {
	if !ss.s.tasks {
		return replay.Reply{}, false
	}
	method := c.req.Method
	if method == "tasks/list" {
		if cur, ok := c.params["cursor"]; ok && string(cur) != "null" {
			return errReply(codeInvalidParams, "tasks/list: no such cursor: mcpmock lists every task on one page", nil), true
		}
		list := []any{}
		for _, t := range ss.tasks.all() {
			list = append(list, t.state())
		}
		return resultReply(map[string]any{"tasks": list}), true
	}
	id, _ := c.str("taskId")
	t := ss.tasks.get(id)
	if t == nil {
		if !ss.s.owner {
			return replay.Reply{}, false
		}
		return errReply(codeInvalidParams, fmt.Sprintf("%s: no task %q in this session", method, id), nil), true
	}
	switch method {
	case "tasks/get":
		return resultReply(t.state()), true
	case "tasks/cancel":
		t.mu.Lock()
		status := t.status
		if !terminal(status) {
			t.status, t.message, t.updated = taskCancelled, "The task was cancelled by request.", time.Now()
			close(t.done)
		}
		t.mu.Unlock()
		if terminal(status) {
			return errReply(codeInvalidParams, fmt.Sprintf("tasks/cancel: task %q is %s already", id, status), nil), true
		}
		t.cancel()
		return resultReply(t.state()), true
	}
	// tasks/result: when the task is over. Over already, it takes no
	// time and is answered at once, in request order.
	if c.prepare && !t.ended() {
		c.play = func(ctx context.Context, peer replay.Peer) replay.Reply { return taskResult(ctx, t, peer) }
		return replay.Reply{}, true
	}
	return taskResult(ctx, t, peer), true
}

// ended says whether t is over (completed, failed or cancelled).
func (t *task) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// taskResult waits for t to end, or ctx, and returns what its call would
// have: its result, tied to the task, or its error. Meanwhile the task may
// put its questions to the client on this request (peer).
func taskResult(ctx context.Context, t *task, peer replay.Peer) replay.Reply {
	for waiting := !t.ended(); waiting; {
		select {
		case <-t.done:
			waiting = false
		case t.asker <- peer:
		case <-ctx.Done():
			return replay.Reply{NoReply: true}
		}
	}
	t.mu.Lock()
	status, r := t.status, t.reply
	unmatched := r.Unmatched && t.chosenLate
	if unmatched {
		t.chosenLate = false // counted once
	}
	t.mu.Unlock()
	if status == taskCancelled {
		return errReply(codeInternal, fmt.Sprintf("tasks/result: task %q was cancelled: it has no result", t.id), nil)
	}
	out := tiedToTask(r, t.id)
	out.Unmatched = unmatched
	return out
}

// tiedToTask is a task's reply r as its tasks/result gives it: its error,
// or its result with the task in _meta.
func tiedToTask(r replay.Reply, id string) replay.Reply {
	if r.Error != nil {
		return replay.Reply{Error: r.Error}
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil || m == nil {
		r.Unmatched = false
		return r
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[relatedTask] = map[string]any{"taskId": id}
	m["_meta"] = meta
	return resultReply(m)
}
