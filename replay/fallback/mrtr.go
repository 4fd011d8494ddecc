package fallback

import (
	"context"
	"encoding/json"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/replay"
)

// Multi round-trip requests (2026-07-28, SEP-2322) meet the fallback when
// the recording answered a call input_required and the client's retry,
// with input the recording does not have, comes here. The retry echoes
// the recording's requestState, which this server never gave: a server
// that signs or dates its states refuses it. So the fallback does what the
// client would have done had the server been asked from the start: it
// sends the call without the input first, takes the state the server
// gives, and sends the retry with that state. Both exchanges are
// recorded (--record-new), so the new cassette holds a whole round trip.
// A retry whose state this server gave (its first round came here too)
// goes as it is.

// staleRetry returns the call to send before req when req is a retry
// whose requestState this server never gave, nil otherwise.
func (ss *session) staleRetry(req *replay.Request) *replay.Request {
	if !jsonrpc.MayAskForInput(req.Method) || !stateless(req) {
		return nil
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return nil
	}
	state, ok := params["requestState"]
	if _, input := params["inputResponses"]; !ok || !input {
		return nil
	}
	ss.mu.Lock()
	given := ss.states[string(state)]
	ss.mu.Unlock()
	if given {
		return nil
	}
	delete(params, "requestState")
	delete(params, "inputResponses")
	first := &replay.Request{Method: req.Method}
	first.Params, _ = json.Marshal(params)
	return first
}

// freshState asks the server the call first (see above) and returns req
// with the requestState the server gave, or req as it is when the server
// gave none.
func (ss *session) freshState(ctx context.Context, peer replay.Peer, up *upstream, req, first *replay.Request) *replay.Request {
	r, err := up.forward(ctx, peer, first, nil)
	if err != nil || r.Result == nil {
		return req
	}
	state := ss.noteState(r.Result)
	if state == nil {
		return req
	}
	params, _, ok := jsonrpc.ReplaceMembers(req.Params, func(path []string, name string) bool {
		return len(path) == 0 && name == "requestState"
	}, state)
	if !ok {
		return req
	}
	retry := *req
	retry.Params = params
	return &retry
}

// noteState remembers the requestState of an input_required result the
// server gave, and returns it (nil when the result is none such).
//
// Every answer to a call that may ask for input passes here, a 64 MiB one
// too: AsksForInput rules out nearly all with a byte search, where
// decoding each with encoding/json went through it twice.
func (ss *session) noteState(result json.RawMessage) json.RawMessage {
	if !jsonrpc.AsksForInput(result) {
		return nil
	}
	state := jsonrpc.Member(result, "requestState")
	if state == nil {
		return nil
	}
	ss.mu.Lock()
	if ss.states == nil {
		ss.states = map[string]bool{}
	}
	ss.states[string(state)] = true
	ss.mu.Unlock()
	return state
}
