package replay

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// What a client must have declared before the server may ask it
// something (2025-11-25 schema, ClientCapabilities). A recording made
// with a client that declared roots holds the roots/list its server
// asked; replayed to a client that declared none, the request would go
// unanswered, or be refused, and the call it came with would wait
// --call-timeout for nothing. So such a request is not sent: it is
// counted in Report.Skipped, as a request a 2026-07-28 client cannot
// take is.

// errUndeclared is what a source gets for a server→client request the
// client did not declare the capability for: what a client answers a
// request it does not handle.
func errUndeclared(method, capability string) *RPCError {
	return &RPCError{Code: -32601, Message: fmt.Sprintf("mcpmock: %s not sent: the client did not declare the %s capability", method, capability)}
}

// undeclared returns the client capability a server→client request needs
// that caps (a ClientCapabilities object) lacks, as a dotted path
// ("roots", "sampling.tools", "elicitation.url"), or "" when caps allow
// it or the request needs none (ping; tasks/get and tasks/result, about a
// task the client made, which it could only make having declared tasks).
func undeclared(caps json.RawMessage, method string, params json.RawMessage) string {
	has := func(path ...string) bool {
		v := jsonrpc.Member(caps, path...)
		return len(v) > 0 && string(v) != "null"
	}
	switch method {
	case "roots/list":
		if !has("roots") {
			return "roots"
		}
	case "sampling/createMessage":
		switch {
		case !has("sampling"):
			return "sampling"
		case present(params, "tools") && !has("sampling", "tools"):
			return "sampling.tools" // the spec: MUST NOT send tools without it
		}
	case "elicitation/create":
		if !has("elicitation") {
			return "elicitation"
		}
		mode := "form"
		if m := jsonrpc.Member(params, "mode"); len(m) > 0 {
			_ = json.Unmarshal(m, &mode)
		}
		switch {
		case mode == "url" && !has("elicitation", "url"):
			return "elicitation.url"
		// An empty elicitation capability is form mode, as it was before
		// 2025-11-25 named the modes.
		case mode == "form" && !has("elicitation", "form") && has("elicitation", "url"):
			return "elicitation.form"
		}
	case "tasks/list":
		if !has("tasks", "list") {
			return "tasks.list"
		}
	case "tasks/cancel":
		if !has("tasks", "cancel") {
			return "tasks.cancel"
		}
	}
	return ""
}

// present says whether the object v has member name, not null.
func present(v json.RawMessage, name string) bool {
	m := jsonrpc.Member(v, name)
	return len(m) > 0 && string(m) != "null"
}

// metaCapsKey is where a 2026-07-28 request declares its client's
// capabilities: in its own _meta, for that request alone.
const metaCapsKey = "io.modelcontextprotocol/clientCapabilities"

// clientCaps is what the client of req declared it can do: req's own
// _meta says (2026-07-28 declares per request, and a server may not go by
// an earlier one), else the session's initialize. known is false when
// neither says, an initialize without capabilities included: such a
// client is asked as before.
func (s *session) clientCaps(req *Request) (caps json.RawMessage, known bool) {
	if req != nil && bytes.Contains(req.Params, []byte(metaCapsKey)) {
		if c := req.member("_meta", metaCapsKey); len(c) > 0 && c[0] == '{' {
			return json.RawMessage(c), true
		}
	}
	s.mu.Lock()
	hello := s.hello
	s.mu.Unlock()
	if c := jsonrpc.Member(hello, "capabilities"); len(c) > 0 && c[0] == '{' {
		return json.RawMessage(c), true
	}
	return nil, false
}

// withheld says why the client of req is not to be sent the server→client
// request method, or nil: it speaks 2026-07-28, which takes none, or it
// declared capabilities without the one the request needs. Either way
// the request is counted in the report as skipped (when says where it
// would have gone) and stderr says so once.
func (s *session) withheld(req *Request, method string, params json.RawMessage, when string) error {
	if v := s.versionOf(req); v >= statelessVersion {
		s.srv.skip(method, params, when,
			fmt.Sprintf("not deliverable to a %s client: that era takes no requests from the server", v),
			fmt.Sprintf("a %s client takes no requests from the server", v))
		return errStatelessCall
	}
	caps, known := s.clientCaps(req)
	if !known {
		return nil
	}
	need := undeclared(caps, method, params)
	if need == "" {
		return nil
	}
	why := fmt.Sprintf("the client did not declare the %s capability", need)
	s.srv.skip(method, params, when, why, why)
	return errUndeclared(method, need)
}
