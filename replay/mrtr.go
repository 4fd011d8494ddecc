package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Multi round-trip requests across eras. In 2026-07-28 (SEP-2322) a
// server that needs input answers tools/call, prompts/get or
// resources/read with resultType input_required: inputRequests (each a
// method, elicitation/create, sampling/createMessage or roots/list, and
// its params) and a requestState; the client fulfils them and sends the
// call again with inputResponses and the state. A handshake-era client
// knows none of that: servers ask it with requests of their own,
// mid-call. So when such an answer was recorded and the live client
// speaks the handshake era, mcpmock does what go-sdk's server does for
// old clients: it sends each input request to the client, builds the
// retry the client would have sent from the replies, and answers the live
// call with what the recording answered that retry. The recorded
// exchange thus replays to either era.

// maxInputRounds bounds the retries one live call may go through: a
// recording whose retry is again answered input_required, with the same
// replies each time, would go round for ever.
const maxInputRounds = 8

// inputRoundsKey is the context key under which fulfil counts the
// input_required answers already fulfilled for one live call.
type inputRoundsKey struct{}

// askAcrossEras wraps the prepared answer p of an interaction recorded
// with an input_required result: to a handshake-era client it fulfils the
// input requests itself (see above); to any other, p plays as recorded.
func (s *cassetteSession) askAcrossEras(p *Prepared) *Prepared {
	// WholeRequest: the retry is built from the live call's params.
	return &Prepared{Reply: p.Reply, SSE: p.SSE, WholeRequest: true, Play: func(ctx context.Context, peer Peer, req *Request) Reply {
		r := p.Reply
		if p.Play != nil {
			r = p.Play(ctx, peer, req)
		}
		v := peer.ProtocolVersion()
		if r.Result == nil || v == "" || v >= statelessVersion {
			return r
		}
		return s.fulfil(ctx, peer, req, r.Result)
	}}
}

// fulfil asks a handshake-era client what the recorded result asked for,
// and answers req with the recorded answer to the retry.
func (s *cassetteSession) fulfil(ctx context.Context, peer Peer, req *Request, result json.RawMessage) Reply {
	rounds, _ := ctx.Value(inputRoundsKey{}).(int)
	if rounds >= maxInputRounds {
		return Reply{Error: &RPCError{Code: -32603, Message: fmt.Sprintf("mcpmock: %s was answered input_required %d times in a row; the recording goes round", req.Method, rounds)}}
	}
	var asked struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState json.RawMessage `json:"requestState"`
	}
	if json.Unmarshal(result, &asked) != nil {
		return Reply{Result: result} // not one to understand: as recorded
	}
	responses := make(map[string]json.RawMessage, len(asked.InputRequests))
	for _, id := range slices.Sorted(maps.Keys(asked.InputRequests)) {
		ir := asked.InputRequests[id]
		reply, err := peer.Call(ctx, ir.Method, ir.Params)
		if err != nil {
			if ctx.Err() != nil {
				return Reply{NoReply: true}
			}
			return Reply{Error: &RPCError{Code: -32603, Message: fmt.Sprintf(
				"mcpmock: the recording asked the client for input (%s, as input request %q of a 2026-07-28 answer) and the client did not give it: %v", ir.Method, id, err)}}
		}
		responses[id] = reply
	}
	params := map[string]json.RawMessage{}
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &params)
	}
	params["inputResponses"], _ = json.Marshal(responses)
	if asked.RequestState != nil {
		params["requestState"] = asked.RequestState
	}
	retry := &Request{ID: req.ID, Method: req.Method}
	retry.Params, _ = json.Marshal(params)
	p, ok := s.Prepare(retry)
	if !ok {
		u := &Unmatched{Method: retry.Method, Params: shortCanon(retry.Method, retry.Params)}
		msg := fmt.Sprintf("mcpmock: the client's input for %s matches no recorded retry", req.Method)
		if near, diff, ok := s.Nearest(retry); ok {
			u.Nearest, u.Diff = near, diff
			msg += fmt.Sprintf("; nearest recorded request: %s\n%s", near, diff)
		}
		data, _ := json.Marshal(u)
		return Reply{Error: &RPCError{Code: -32602, Message: msg, Data: data, unmatched: u}}
	}
	ctx = context.WithValue(ctx, inputRoundsKey{}, rounds+1)
	if p.Play != nil {
		return p.Play(ctx, peer, retry)
	}
	return p.Reply
}
