// Package jsonrpc classifies JSON-RPC 2.0 frames as MCP peers exchange them.
//
// It reads a copy of a frame and never changes or re-encodes the original:
// the proxies forward the bytes they read, and only their summaries come
// from here. Ids keep their JSON spelling, so 1 and "1" stay different;
// CanonicalID gives the text to compare them by.
// ReplaceMembers is the one writer: it makes a new copy of a frame with
// named values blanked, for cassettes that are shared.
package jsonrpc

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
	// InputRequired is set for a result with resultType "input_required"
	// (2026-07-28): the server asks the client for input, and the client
	// retries the request with it.
	InputRequired bool
	// ErrorCode is the JSON-RPC error code when Kind is Error.
	ErrorCode int
	// ProgressToken is the JSON text of params._meta.progressToken on a
	// request, or params.progressToken on notifications/progress.
	ProgressToken string
	// Reason says why a frame is Malformed.
	Reason string
}

// Classify summarises one frame. It never fails: a frame that is not a
// JSON-RPC 2.0 message is Malformed, with the reason. Member names are
// matched exactly (JSON-RPC is case-sensitive); when a name repeats, the
// last one counts, as in encoding/json.
func Classify(frame []byte) Summary {
	s := scanner{b: frame}
	s.ws()
	if s.i >= len(frame) {
		return Summary{Kind: Malformed, Reason: "empty frame"}
	}
	var version, id, method, params, result, errObj []byte
	switch frame[s.i] {
	case '[':
		if !s.array(nil) || !s.atEnd() {
			return Summary{Kind: Malformed, Reason: "invalid JSON"}
		}
		return Summary{Kind: Batch}
	case '{':
		ok := s.object(func(key []byte, escaped bool, vs, ve int) {
			v := frame[vs:ve]
			switch {
			case keyIs(key, escaped, "jsonrpc"):
				version = v
			case keyIs(key, escaped, "id"):
				id = v
			case keyIs(key, escaped, "method"):
				method = v
			case keyIs(key, escaped, "params"):
				params = v
			case keyIs(key, escaped, "result"):
				result = v
			case keyIs(key, escaped, "error"):
				errObj = v
			}
		})
		if !ok || !s.atEnd() {
			return Summary{Kind: Malformed, Reason: "invalid JSON"}
		}
	default:
		if _, _, ok := s.value(); ok && s.atEnd() {
			return Summary{Kind: Malformed, Reason: "not a JSON object"}
		}
		return Summary{Kind: Malformed, Reason: "invalid JSON"}
	}

	if v, ok := stringValue(version); !ok || v != "2.0" {
		return Summary{Kind: Malformed, Reason: `jsonrpc is not "2.0"`}
	}
	out := Summary{}
	if id != nil && string(id) != "null" {
		if id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
			return Summary{Kind: Malformed, Reason: "id is neither a string nor a number"}
		}
		out.ID = string(id)
	}
	switch {
	case method != nil && string(method) != "null":
		m, ok := stringValue(method)
		if !ok {
			return Summary{Kind: Malformed, ID: out.ID, Reason: "method is not a string"}
		}
		out.Method = m
		out.Kind = Notification
		if out.ID != "" {
			out.Kind = Request
		}
		out.Tool, out.ProgressToken = paramsSummary(m, params)
	case errObj != nil:
		if errObj[0] != '{' {
			return Summary{Kind: Malformed, ID: out.ID, Reason: "error is not an object"}
		}
		out.Kind, out.IsError = Error, true
		codeOK := true
		members(errObj, func(key []byte, escaped bool, v []byte) {
			if keyIs(key, escaped, "code") {
				out.ErrorCode, codeOK = intValue(v)
			}
		})
		if !codeOK {
			return Summary{Kind: Malformed, ID: out.ID, Reason: "error code is not an integer"}
		}
	case result != nil:
		if out.ID == "" {
			return Summary{Kind: Malformed, Reason: "result without id"}
		}
		out.Kind = Response
		members(result, func(key []byte, escaped bool, v []byte) {
			switch {
			case keyIs(key, escaped, "isError"):
				out.IsError = string(v) == "true"
			case keyIs(key, escaped, "resultType"):
				out.InputRequired = isInputRequired(v)
			}
		})
	default:
		return Summary{Kind: Malformed, ID: out.ID, Reason: "neither method, result nor error"}
	}
	return out
}

func (s *scanner) atEnd() bool {
	s.ws()
	return s.i == len(s.b)
}

func paramsSummary(method string, params []byte) (tool, progressToken string) {
	var tok []byte
	members(params, func(key []byte, escaped bool, v []byte) {
		switch {
		case method == "tools/call" && keyIs(key, escaped, "name"):
			tool, _ = stringValue(v)
		case method == "notifications/progress" && keyIs(key, escaped, "progressToken"):
			tok = v
		case method != "notifications/progress" && keyIs(key, escaped, "_meta"):
			members(v, func(key []byte, escaped bool, v []byte) {
				if keyIs(key, escaped, "progressToken") {
					tok = v
				}
			})
		}
	})
	if tok != nil && string(tok) != "null" {
		progressToken = string(tok)
	}
	return tool, progressToken
}
