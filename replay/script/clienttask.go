package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/replay"
)

// This file is an elicit or sample asked as a task of the client's
// (2025-11-25 tasks, the other way round): to a client that declared
// tasks.requests.elicitation.create or tasks.requests.sampling.createMessage,
// the request carries params.task; the client may answer at once, or
// with a CreateTaskResult naming a task it made, which mcpmock then polls
// with tasks/get until it ends or needs input, and fetches with
// tasks/result: that result is the reply. This is how a host's task
// receiver is tested against a fake server. 2026-07-28 has no such tasks
// (its client answers input requests itself): the question is put as
// usual there, as it is to a client that did not declare them.

// clientTask is an elicit's or sample's task: true, or {ttl: N}.
type clientTask struct {
	meta map[string]any // params.task: the ttl asked for, if any
	// limit bounds the polling: the ttl asked for, else clientTaskWait.
	limit time.Duration
}

const (
	// clientTaskWait bounds the polling of a task asked for without a ttl.
	clientTaskWait = time.Minute
	// clientTaskPoll is the wait between polls when the client's task
	// gives no pollInterval; clientTaskPollMax caps the client's, so that
	// a test does not sit out a long interval.
	clientTaskPoll    = 100 * time.Millisecond
	clientTaskPollMax = time.Second
)

// clientTask compiles an elicit's or sample's task field.
func (c *compiler) clientTask(v Value) *clientTask {
	if !v.Set {
		return nil
	}
	switch x := v.V.(type) {
	case bool:
		if x {
			return &clientTask{meta: map[string]any{}, limit: clientTaskWait}
		}
		return nil
	case map[string]any:
		t := &clientTask{meta: map[string]any{}, limit: clientTaskWait}
		for k, val := range x {
			if k != "ttl" {
				c.errorf(sub(v.Pos, k), "task takes only ttl (milliseconds), not %s", k)
				continue
			}
			n, ok := number(val)
			if !ok || n < 1 || n != float64(int64(n)) {
				c.errorf(sub(v.Pos, "ttl"), "ttl must be a whole number of milliseconds above 0, got %v", val)
				continue
			}
			t.meta["ttl"] = int64(n)
			t.limit = time.Duration(n) * time.Millisecond
		}
		return t
	}
	c.errorf(v.Pos, "task must be true or a mapping with ttl (milliseconds)")
	return nil
}

// takesClientTask says whether the client of c declared that it takes
// tasks for questions of kind k (tasks.requests.elicitation.create,
// tasks.requests.sampling.createMessage). A handshake-era client only.
func (ss *session) takesClientTask(c *call, k askKind) bool {
	if c.stateless {
		return false
	}
	caps, known := ss.clientCapabilities(c)
	return known && jsonrpc.TakesTasksFor(caps["tasks"], k.method)
}

// withTask adds the task to a question's params.
func withTask(params json.RawMessage, t *clientTask) json.RawMessage {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	p["task"] = t.meta
	return mustJSON(p)
}

// createdTask is a CreateTaskResult's task, as far as polling needs it.
type createdTask struct {
	TaskID       string   `json:"taskId"`
	Status       string   `json:"status"`
	PollInterval *float64 `json:"pollInterval"`
}

// taskOf returns the task a client's answer made, if it is a
// CreateTaskResult.
func taskOf(result json.RawMessage) (createdTask, bool) {
	var r struct {
		Task *createdTask `json:"task"`
	}
	if json.Unmarshal(result, &r) != nil || r.Task == nil || r.Task.TaskID == "" {
		return createdTask{}, false
	}
	return *r.Task, true
}

var errClientTaskWait = errors.New("the client's task did not end in time")

// followClientTask polls the client's task t (tasks/get) until it ends or
// needs input, at the interval it asks (at most clientTaskPollMax), at
// most limit in all, then fetches its result (tasks/result), which it
// returns; a task that failed or was cancelled has none. The first poll
// goes at once.
func followClientTask(ctx context.Context, peer replay.Peer, t createdTask, limit time.Duration) (json.RawMessage, error) {
	deadline := time.Now().Add(limit)
	idParams := mustJSON(map[string]any{"taskId": t.TaskID})
	for first := true; t.Status == "working"; first = false {
		if !first {
			pause := clientTaskPoll
			if t.PollInterval != nil && *t.PollInterval >= 0 {
				pause = min(time.Duration(*t.PollInterval*float64(time.Millisecond)), clientTaskPollMax)
			}
			if time.Now().Add(pause).After(deadline) {
				return nil, errClientTaskWait
			}
			if !wait(ctx, pause) {
				return nil, ctx.Err()
			}
		}
		raw, err := peer.Call(ctx, "tasks/get", idParams)
		if err != nil {
			return nil, fmt.Errorf("tasks/get: %w", err)
		}
		var polled createdTask
		if json.Unmarshal(raw, &polled) != nil || polled.Status == "" {
			return nil, fmt.Errorf("tasks/get: no status in %s", raw)
		}
		t.Status = polled.Status
		if polled.PollInterval != nil {
			t.PollInterval = polled.PollInterval
		}
	}
	if t.Status == "failed" || t.Status == "cancelled" {
		return nil, fmt.Errorf("the client's task %s ended %s", t.TaskID, t.Status)
	}
	// Completed, or input_required (whereupon the spec has the requestor
	// ask for the result at once: the client's questions come with it).
	return peer.Call(ctx, "tasks/result", idParams)
}
