package script

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mcptape/mcptape/replay"
)

// This file is what a tool, prompt or resource asks the client before it
// answers (tools/call, prompts/get, resources/read): a form for its user
// (elicit, elicit.go), a completion from its model (sample, sample.go),
// its roots (roots). Answers can depend on the replies, which
// when.elicited and when.sampled match and templates read as .elicited,
// .sampled and .roots.
//
// The two eras ask differently. In the handshake era the server sends
// each request in the middle of the call, one after another, and waits
// for each reply. In 2026-07-28 (SEP-2322) a server cannot send requests:
// it answers the call with resultType input_required and every question
// among its inputRequests at once, and the client calls again with the
// replies in inputResponses; the spec allows that on exactly these three
// methods. That first round is not a call of the tool: it counts for
// neither sequence nor events. Because the 2026 client
// answers all questions at once, a question's templates see the call's
// arguments but no other question's reply, in both eras alike.

// askKind is one kind of question.
type askKind struct {
	field      string // the field in a script
	method     string // the request that asks it
	capability string // the client capability that says it may be asked
	key        string // its key among inputRequests, and inputResponses
	data       string // the name when and templates know the reply by
}

var (
	elicitKind = askKind{field: "elicit", method: "elicitation/create", capability: "elicitation", key: "elicitation", data: "elicited"}
	sampleKind = askKind{field: "sample", method: "sampling/createMessage", capability: "sampling", key: "sampling", data: "sampled"}
	rootsKind  = askKind{field: "roots", method: "roots/list", capability: "roots", key: "roots", data: "roots"}
)

// value is what templates and when see of a reply (nil: no reply):
// elicit's and sample's whole result, and the list of roots, which is all
// roots/list answers.
func (k askKind) value(result map[string]any) any {
	if k == rootsKind {
		roots, _ := result["roots"].([]any)
		return roots
	}
	return result
}

// ask is one question a tool puts to the client.
type ask struct {
	kind askKind
	// mode, when set, is a member the client's capability must hold as
	// well (elicitation's "url").
	mode string
	// params renders the request's params for one call.
	params func(data map[string]any) (json.RawMessage, error)
	// task, when set, asks a client that takes them to run it as a task
	// of its own (clienttask.go).
	task *clientTask
}

// askable returns the questions among asks that the client of c may be
// asked.
func (ss *session) askable(c *call, asks []*ask) []*ask {
	var out []*ask
	for _, a := range asks {
		if ss.canAsk(c, a.kind.capability, a.mode) {
			out = append(out, a)
		}
	}
	return out
}

// questions is what a tool, prompt or resource asks before it answers,
// and how it answers.
type questions struct {
	what string // names it in errors: tool "x", prompt "x", resource "x"
	asks []*ask
	data map[string]any // what the questions' templates see
	// start commits, in request order, what the answer depends on (a
	// tool's call count) and returns how to answer given the replies by
	// data name. answer reports false when the script has no answer for
	// them, which lets an override pass the request on.
	start func() func(ctx context.Context, peer replay.Peer, c *call, replies map[string]any) (replay.Reply, bool)
	// none is the reply when there is no answer and it is too late to
	// pass the request on: the client was asked already.
	none func(replies map[string]any) replay.Reply
}

// askFirst is the one path by which tools/call, prompts/get and
// resources/read ask the client first: nothing to ask (or nothing the
// client may be asked) answers at once; in 2026-07-28 the first round is
// input_required and its retry is answered from the replies it carries;
// in the handshake era the questions are put mid-call, when the call
// plays.
func (ss *session) askFirst(ctx context.Context, peer replay.Peer, c *call, q questions) (replay.Reply, bool) {
	asks := ss.askable(c, q.asks)
	if len(asks) == 0 {
		return q.start()(ctx, peer, c, nil)
	}
	params := make([]json.RawMessage, len(asks))
	for i, a := range asks {
		p, err := a.params(q.data)
		if err != nil {
			return errReply(codeInternal, fmt.Sprintf("mcpmock script: %s, %s: %v", q.what, a.kind.field, err), nil), true
		}
		params[i] = p
	}
	if c.stateless {
		replies, retry := c.replies(asks)
		if !retry {
			return inputRequired(asks, params), true
		}
		return q.start()(ctx, peer, c, replies)
	}
	tasks := make([]*clientTask, len(asks))
	for i, a := range asks {
		if a.task != nil && ss.takesClientTask(c, a.kind) {
			params[i], tasks[i] = withTask(params[i], a.task), a.task
		}
	}
	// The handshake era asks mid-call, which needs the peer: commit now,
	// in order, and ask and answer when the call plays.
	answer := q.start()
	play := func(ctx context.Context, peer replay.Peer) replay.Reply {
		c := *c
		c.prepare = false
		replies := askClient(ctx, peer, asks, params, tasks)
		reply, ok := answer(ctx, peer, &c, replies)
		if !ok { // too late to pass the call on to the next source
			reply = q.none(replies)
		}
		return reply
	}
	if c.prepare {
		c.play = play
		return replay.Reply{}, true
	}
	return play(ctx, peer), true
}

// withReplies returns data with the replies to asks, by data name, as
// templates read them.
func withReplies(data map[string]any, asks []*ask, replies map[string]any) map[string]any {
	data = maps.Clone(data)
	for _, q := range asks {
		data[q.kind.data] = reply(replies, q.kind)
	}
	return data
}

// completion is the elicitationId to say complete before the answer: a
// url-mode elicit that says complete, and that the user accepted; "" for
// none. 2026-07-28 has no notifications/elicitation/complete: its client
// is not told when the user is done, and retries when the user says so.
func completion(c *call, completes bool, data map[string]any) string {
	if c.stateless {
		return ""
	}
	if elicited, _ := data[elicitKind.data].(map[string]any); completes && elicited["action"] == "accept" {
		return elicitationID(data)
	}
	return ""
}

// sendComplete tells the client the user has finished on the page of
// the elicitation id, if any.
func sendComplete(peer replay.Peer, id string) {
	if id != "" {
		_ = peer.Notify("notifications/elicitation/complete", mustJSON(map[string]any{"elicitationId": id}))
	}
}

// canAsk says whether the client may be asked what needs capability (and
// its member mode, when given): unless what it told of its capabilities
// (initialize, or the request's _meta in 2026-07-28) leaves it out. A
// client that never said is asked.
func (ss *session) canAsk(c *call, capability, mode string) bool {
	caps, known := ss.clientCapabilities(c)
	if !known {
		return true
	}
	v, ok := caps[capability]
	if !ok || string(v) == "null" {
		return false
	}
	if mode == "" {
		return true
	}
	var modes map[string]json.RawMessage
	_ = json.Unmarshal(v, &modes)
	m, ok := modes[mode]
	return ok && string(m) != "null"
}

// clientCapabilities is what the client of c told of its capabilities:
// at initialize, or in the request's _meta in 2026-07-28; known is false
// when it never said.
func (ss *session) clientCapabilities(c *call) (caps map[string]json.RawMessage, known bool) {
	if c.stateless {
		var meta map[string]json.RawMessage
		if json.Unmarshal(c.params["_meta"], &meta) == nil {
			if raw, ok := meta[metaClientCapabilities]; ok {
				known = json.Unmarshal(raw, &caps) == nil
			}
		}
		return caps, known
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.clientCaps, ss.clientCapsKnown
}

// noteClientCaps keeps what a handshake-era client declared, and the
// version it asked for, which is the session's unless this source
// answers initialize itself and agrees on another.
func (ss *session) noteClientCaps(c *call) {
	asked, _ := c.str("protocolVersion")
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if asked < statelessVersion {
		ss.version = asked
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.params["capabilities"], &caps) != nil {
		return
	}
	ss.clientCaps, ss.clientCapsKnown = caps, true
}

// replies reads the answers a 2026-07-28 retry carries to asks, by their
// data names; retry is false when the call is no retry of them (no
// inputResponses, or none under their keys). A reply that is not an
// object is no reply.
func (c *call) replies(asks []*ask) (replies map[string]any, retry bool) {
	var responses map[string]json.RawMessage
	if json.Unmarshal(c.params["inputResponses"], &responses) != nil {
		return nil, false
	}
	replies = map[string]any{}
	for _, a := range asks {
		raw, ok := responses[a.kind.key]
		if !ok {
			continue
		}
		retry = true
		var result map[string]any
		if decodeObject(raw, &result) == nil {
			replies[a.kind.data] = a.kind.value(result)
		}
	}
	return replies, retry
}

// inputRequired is the first round of a 2026-07-28 call: every question,
// for the client to answer and call again.
func inputRequired(asks []*ask, params []json.RawMessage) replay.Reply {
	requests := map[string]any{}
	for i, a := range asks {
		p := params[i]
		if a.kind == elicitKind && a.mode == "url" {
			// 2026-07-28's url mode has no elicitationId: with no
			// complete notification there is nothing for it to name.
			p = withoutKey(p, "elicitationId")
		}
		requests[a.kind.key] = map[string]any{"method": a.kind.method, "params": p}
	}
	return resultReply(map[string]any{"resultType": "input_required", "inputRequests": requests})
}

// askClient puts the questions to a handshake-era client, one after
// another, and returns the replies by data name. A question answered with
// an error, not at all (--call-timeout), or not with an object has none.
// One asked as a task (tasks[i]) that the client made a task of is
// answered by the task's result.
func askClient(ctx context.Context, peer replay.Peer, asks []*ask, params []json.RawMessage, tasks []*clientTask) map[string]any {
	replies := map[string]any{}
	for i, a := range asks {
		raw, err := peer.Call(ctx, a.kind.method, params[i])
		if err != nil {
			continue
		}
		if t, made := taskOf(raw); tasks[i] != nil && made {
			if raw, err = followClientTask(ctx, peer, t, tasks[i].limit); err != nil {
				continue
			}
		}
		var result map[string]any
		if decodeObject(raw, &result) == nil {
			replies[a.kind.data] = a.kind.value(result)
		}
	}
	return replies
}

// asks compiles what a tool, prompt or resource asks the client first, in
// the order it is asked; completes says its elicit is in url mode and
// says when the user is done.
func (c *compiler) asks(e *Elicit, s *Sample, roots bool) (asks []*ask, completes bool) {
	if e != nil {
		f := c.elicit(e)
		asks = append(asks, &ask{kind: elicitKind, mode: f.clientMode(), params: f.params, task: c.clientTask(e.Task)})
		completes = f.complete
	}
	if s != nil {
		asks = append(asks, c.sample(s))
	}
	if roots {
		asks = append(asks, rootsAsk)
	}
	return asks, completes
}

// rootsAsk is roots: true.
var rootsAsk = &ask{kind: rootsKind, params: func(map[string]any) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}}

// reply is the reply to a question of kind k among replies, typed as
// templates expect it (an object, or for roots a list) even when there is
// none, so that {{.elicited.action}} prints <no value> rather than fail.
func reply(replies map[string]any, k askKind) any {
	v := replies[k.data]
	if k == rootsKind {
		roots, _ := v.([]any)
		return roots
	}
	m, _ := v.(map[string]any)
	return m
}

// repliesText says what the replies that when matches were, for the
// message that no answer matched them.
func repliesText(asks []*ask, replies map[string]any) string {
	msg := ""
	for _, q := range asks {
		switch q.kind {
		case elicitKind:
			msg += fmt.Sprintf(" and the client's answer %s", mustJSON(reply(replies, q.kind)))
		case sampleKind:
			msg += fmt.Sprintf(" and the model's answer %s", mustJSON(reply(replies, q.kind)))
		}
	}
	return msg
}

// completeThen answers with reply, after the complete notification of
// the elicitation id, if any; while c is being prepared, that waits for
// the play, which has the peer.
func (c *call) completeThen(peer replay.Peer, id string, reply func() replay.Reply) replay.Reply {
	if id != "" && c.prepare {
		c.play = func(_ context.Context, peer replay.Peer) replay.Reply {
			sendComplete(peer, id)
			return reply()
		}
		return replay.Reply{}
	}
	sendComplete(peer, id)
	return reply()
}

// withoutKey returns the JSON object params without key.
func withoutKey(params json.RawMessage, key string) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	delete(p, key)
	return mustJSON(p)
}
