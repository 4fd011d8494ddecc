package script

import (
	"context"
	"encoding/json"

	"github.com/mcptape/mcptape/replay"
)

// This file is what a tool asks the client before it answers: a form for
// its user (elicit, elicit.go), a completion from its model (sample,
// sample.go), its roots (roots). Answers can depend on the replies, which
// when.elicited and when.sampled match and templates read as .elicited,
// .sampled and .roots.
//
// The two eras ask differently. In the handshake era the server sends
// each request in the middle of the call, one after another, and waits
// for each reply. In 2026-07-28 (SEP-2322) a server cannot send requests:
// it answers the call with resultType input_required and every question
// among its inputRequests at once, and the client calls again with the
// replies in inputResponses. That first round is not a call of the tool:
// it counts for neither sequence nor events. Because the 2026 client
// answers all questions at once, a question's templates see the call's
// arguments but no other question's reply, in both eras alike.

// askKind is one kind of question.
type askKind struct {
	field      string // the tool's field in a script
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
}

// askable returns the questions of t that the client of c may be asked.
func (ss *session) askable(c *call, t *tool) []*ask {
	var out []*ask
	for _, a := range t.asks {
		if ss.canAsk(c, a.kind.capability, a.mode) {
			out = append(out, a)
		}
	}
	return out
}

// canAsk says whether the client may be asked what needs capability (and
// its member mode, when given): unless what it told of its capabilities
// (initialize, or the request's _meta in 2026-07-28) leaves it out. A
// client that never said is asked.
func (ss *session) canAsk(c *call, capability, mode string) bool {
	var caps map[string]json.RawMessage
	known := false
	if c.stateless {
		var meta map[string]json.RawMessage
		if json.Unmarshal(c.params["_meta"], &meta) == nil {
			if raw, ok := meta[metaClientCapabilities]; ok {
				known = json.Unmarshal(raw, &caps) == nil
			}
		}
	} else {
		ss.mu.Lock()
		caps, known = ss.clientCaps, ss.clientCapsKnown
		ss.mu.Unlock()
	}
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

// noteClientCaps keeps what a handshake-era client declared.
func (ss *session) noteClientCaps(c *call) {
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.params["capabilities"], &caps) != nil {
		return
	}
	ss.mu.Lock()
	ss.clientCaps, ss.clientCapsKnown = caps, true
	ss.mu.Unlock()
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
		if json.Unmarshal(raw, &result) == nil {
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
		requests[a.kind.key] = map[string]any{"method": a.kind.method, "params": params[i]}
	}
	return resultReply(map[string]any{"resultType": "input_required", "inputRequests": requests})
}

// askClient puts the questions to a handshake-era client, one after
// another, and returns the replies by data name. A question answered with
// an error, not at all (--call-timeout), or not with an object has none.
func askClient(ctx context.Context, peer replay.Peer, asks []*ask, params []json.RawMessage) map[string]any {
	replies := map[string]any{}
	for i, a := range asks {
		raw, err := peer.Call(ctx, a.kind.method, params[i])
		if err != nil {
			continue
		}
		var result map[string]any
		if json.Unmarshal(raw, &result) == nil {
			replies[a.kind.data] = a.kind.value(result)
		}
	}
	return replies
}

// rootsAsk is a tool's roots: true.
var rootsAsk = &ask{kind: rootsKind, params: func(map[string]any) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}}
