// Package jsonrpc classifies JSON-RPC 2.0 frames as MCP peers exchange them.
//
// It reads a copy of a frame and never changes or re-encodes the original:
// the proxies forward the bytes they read, and only their summaries come
// from here. Ids keep their JSON spelling, so 1 and "1" stay different.
package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// Kind is what a frame is.
type Kind uint8

// Kinds of frame. Error is a response carrying a JSON-RPC error object.
const (
	Malformed Kind = iota
	Request
	Response
	Notification
	Error
	Batch
)

var kindNames = [...]string{"malformed", "request", "response", "notification", "error", "batch"}

// String returns the lower-case name used in filters and on screen.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// Summary is what a frame says about itself.
type Summary struct {
	Kind Kind
	// Method of a request or notification.
	Method string
	// ID is the id's JSON text (`1`, `"1"`), empty when there is none.
	ID string
	// Tool is params.name of a tools/call request.
	Tool string
	// IsError is set for a JSON-RPC error and for a result with isError true.
	IsError bool
	// ErrorCode is the JSON-RPC error code when Kind is Error.
	ErrorCode int
	// ProgressToken is the JSON text of params._meta.progressToken on a
	// request, or params.progressToken on notifications/progress.
	ProgressToken string
	// Reason says why a frame is Malformed.
	Reason string
}

// wire has the fields of any JSON-RPC message; RawMessage keeps each one
// unparsed until it is needed.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Classify summarises one frame. It never fails: a frame that is not a
// JSON-RPC 2.0 message is Malformed, with the reason.
func Classify(frame []byte) Summary {
	b := bytes.TrimSpace(frame)
	if len(b) == 0 {
		return Summary{Kind: Malformed, Reason: "empty frame"}
	}
	if b[0] == '[' {
		if !json.Valid(b) {
			return Summary{Kind: Malformed, Reason: "invalid JSON"}
		}
		return Summary{Kind: Batch}
	}
	if b[0] != '{' {
		return Summary{Kind: Malformed, Reason: "not a JSON object"}
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return Summary{Kind: Malformed, Reason: "invalid JSON: " + err.Error()}
	}
	if w.JSONRPC != "2.0" {
		return Summary{Kind: Malformed, Reason: `jsonrpc is not "2.0"`}
	}
	s := Summary{}
	if len(w.ID) > 0 && !isNull(w.ID) {
		if !validID(w.ID) {
			return Summary{Kind: Malformed, Reason: "id is neither a string nor a number"}
		}
		s.ID = string(w.ID)
	}
	switch {
	case w.Method != nil:
		s.Method = *w.Method
		if s.ID == "" {
			s.Kind = Notification
		} else {
			s.Kind = Request
		}
		s.Tool, s.ProgressToken = paramsSummary(s.Method, w.Params)
	case len(w.Error) > 0:
		s.Kind = Error
		s.IsError = true
		var e struct {
			Code int `json:"code"`
		}
		if json.Unmarshal(w.Error, &e) != nil {
			return Summary{Kind: Malformed, ID: s.ID, Reason: "error is not an object"}
		}
		s.ErrorCode = e.Code
	case len(w.Result) > 0:
		if s.ID == "" {
			return Summary{Kind: Malformed, Reason: "result without id"}
		}
		s.Kind = Response
		var r struct {
			IsError bool `json:"isError"`
		}
		if bytes.HasPrefix(w.Result, []byte("{")) && json.Unmarshal(w.Result, &r) == nil {
			s.IsError = r.IsError
		}
	default:
		return Summary{Kind: Malformed, ID: s.ID, Reason: "neither method, result nor error"}
	}
	return s
}

func paramsSummary(method string, params json.RawMessage) (tool, progressToken string) {
	if len(params) == 0 || params[0] != '{' {
		return "", ""
	}
	var p struct {
		Name          string          `json:"name"`
		ProgressToken json.RawMessage `json:"progressToken"`
		Meta          struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", ""
	}
	if method == "tools/call" {
		tool = p.Name
	}
	tok := p.Meta.ProgressToken
	if method == "notifications/progress" {
		tok = p.ProgressToken
	}
	if len(tok) > 0 && !isNull(tok) {
		progressToken = string(tok)
	}
	return tool, progressToken
}

func isNull(b json.RawMessage) bool { return string(b) == "null" }

func validID(b json.RawMessage) bool {
	switch b[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}
