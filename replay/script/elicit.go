package script

import (
	"context"
	"encoding/json"
	"fmt"
	"text/template"

	"github.com/mcptape/mcptape/replay"
)

// This file is a tool's elicit: a form the tool puts to the client (its
// user) before it answers, whose answer when.elicited matches and
// templates read as .elicited.
//
// The two eras ask differently. In the handshake era the server sends
// elicitation/create in the middle of the call and waits for the reply.
// In 2026-07-28 (SEP-2322) a server cannot send requests: it answers the
// call with resultType input_required and the form among its
// inputRequests, and the client calls again with the form's answer in
// inputResponses. That first round is not a call of the tool: it counts
// for neither sequence nor events.

// elicitKey names the form among a 2026-07-28 result's inputRequests, and
// so its answer among the retry's inputResponses.
const elicitKey = "elicitation"

type elicitForm struct {
	message *template.Template
	schema  map[string]any
}

func (c *compiler) elicit(e *Elicit) *elicitForm {
	f := &elicitForm{}
	if e.Message == "" {
		c.errorf(e.Pos, "elicit needs a message")
	} else {
		f.message = c.template(sub(e.Pos, "message"), e.Message)
	}
	if !e.RequestedSchema.Set {
		c.errorf(e.Pos, "elicit needs a requestedSchema: the form's fields")
		return f
	}
	v := e.RequestedSchema
	m, ok := v.V.(map[string]any)
	if !ok {
		c.errorf(v.Pos, "requestedSchema must be a mapping")
		return f
	}
	if m["type"] != "object" {
		c.errorf(v.Pos, "requestedSchema must have type: object")
	}
	props, _ := m["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		if problem := formFieldProblem(props[name]); problem != "" {
			c.errorf(sub(sub(v.Pos, "properties"), name), "%s: a form asks only for strings, numbers, integers, booleans and enums, not nested values", problem)
		}
	}
	c.schema(v, false) // it must compile too
	f.schema = m
	return f
}

// formFieldProblem says what keeps prop from being a form field (the
// spec's PrimitiveSchemaDefinition, and 2025-11-25's multi-select enum:
// an array of strings), "" when nothing does.
func formFieldProblem(prop any) string {
	p, ok := prop.(map[string]any)
	if !ok {
		return "a property must be a mapping"
	}
	switch typ := p["type"]; typ {
	case "string", "number", "integer", "boolean":
		return ""
	case "array":
		items, _ := p["items"].(map[string]any)
		if items["type"] == "string" || items["anyOf"] != nil {
			return ""
		}
		return "an array property must be of strings (a multi-select enum)"
	default:
		return fmt.Sprintf("type %v", typ)
	}
}

// params renders the elicitation/create params for one call.
func (f *elicitForm) params(data map[string]any) (json.RawMessage, error) {
	msg, err := render(f.message, data)
	if err != nil {
		return nil, err
	}
	return mustJSON(map[string]any{"message": msg, "requestedSchema": f.schema}), nil
}

// canElicit says whether the client may be asked: unless what it told of
// its capabilities (initialize, or the request's _meta in 2026-07-28)
// leaves out elicitation. A client that never said is asked.
func (ss *session) canElicit(c *call) bool {
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
	v, ok := caps["elicitation"]
	return ok && string(v) != "null"
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

// inputResponse is the answer a 2026-07-28 retry carries to the tool's
// form; ok is false when the call is not such a retry.
func (c *call) inputResponse() (answer map[string]any, ok bool) {
	var responses map[string]json.RawMessage
	if json.Unmarshal(c.params["inputResponses"], &responses) != nil {
		return nil, false
	}
	raw, ok := responses[elicitKey]
	if !ok {
		return nil, false
	}
	if json.Unmarshal(raw, &answer) != nil {
		return nil, true // answered, but not with an object: nothing matches it
	}
	return answer, true
}

// inputRequired is the first round of a 2026-07-28 call: the form, for
// the client to answer and call again.
func inputRequired(params json.RawMessage) replay.Reply {
	return resultReply(map[string]any{
		"resultType":    "input_required",
		"inputRequests": map[string]any{elicitKey: map[string]any{"method": "elicitation/create", "params": params}},
	})
}

// askClient puts the form to a handshake-era client and returns its
// answer; nil when it answered with an error, not at all
// (--call-timeout), or not with an object.
func askClient(ctx context.Context, peer replay.Peer, params json.RawMessage) map[string]any {
	raw, err := peer.Call(ctx, "elicitation/create", params)
	if err != nil {
		return nil
	}
	var answer map[string]any
	if json.Unmarshal(raw, &answer) != nil {
		return nil
	}
	return answer
}
