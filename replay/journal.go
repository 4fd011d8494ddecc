package replay

import (
	"encoding/json"
	"time"
)

// Received is one request or notification a client sent, as the journal
// keeps it: what a test checks its host did ("called search once, with
// this query"), whatever answered it.
type Received struct {
	// Session numbers the client sessions 1, 2, … in the order they
	// started (a stdio connection, an HTTP session, a WebSocket).
	Session int       `json:"session"`
	Time    time.Time `json:"time"`
	// ID is the request id's JSON text; nil for a notification.
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// ToolCalls picks, from what clients sent, the arguments of each
// tools/call of the named tool, in order: WireMock's "verify". A
// 2026-07-28 retry (the call sent again with inputResponses, after the
// server asked for input) is the same call, not another: it is left out,
// so that a host calls a tool as many times in either protocol era.
// Received has every request as sent.
func ToolCalls(received []Received, name string) []json.RawMessage {
	var out []json.RawMessage
	for _, r := range received {
		if r.Method != "tools/call" {
			continue
		}
		var p struct {
			Name           string          `json:"name"`
			Arguments      json.RawMessage `json:"arguments"`
			InputResponses json.RawMessage `json:"inputResponses"`
		}
		if json.Unmarshal(r.Params, &p) == nil && p.Name == name && p.InputResponses == nil {
			out = append(out, p.Arguments)
		}
	}
	return out
}

// journal hands one received message to Options.Journal. The bytes are
// copied: the transport may reuse its buffer once the frame is handled.
func (s *session) journal(id json.RawMessage, method string, params json.RawMessage) {
	fn := s.srv.opts.Journal
	if fn == nil {
		return
	}
	r := Received{Session: s.num, Time: time.Now(), Method: method}
	if id != nil {
		r.ID = append(json.RawMessage(nil), id...)
	}
	if len(params) > 0 {
		r.Params = append(json.RawMessage(nil), params...)
	}
	fn(r)
}
