package recorder

import (
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// FrameRedactor blanks secrets inside frames: the value of every object
// member with one of its names (compared without case), at any depth
// inside params, result and error, becomes the JSON string "[redacted]".
// Every other byte stays as it was. Replay matches a redacted request value
// with any live one, so a redacted cassette still replays.
//
// The JSON-RPC envelope (jsonrpc, id, method, params, result, error) is
// never touched: it holds no secret and replay needs it. Nor are JSON
// Schemas (inputSchema, outputSchema, elicitation's requestedSchema),
// which name the fields a secret goes in and hold no values: blanking a
// property there would break the replayed tools/list.
type FrameRedactor struct {
	names []string
}

var (
	redactedJSON  = []byte(`"` + store.Redacted + `"`)
	schemaMembers = []string{"inputSchema", "outputSchema", "requestedSchema"}
)

// NewFrameRedactor returns a redactor for names, or nil when there are none.
func NewFrameRedactor(names []string) *FrameRedactor {
	if len(names) == 0 {
		return nil
	}
	return &FrameRedactor{names: slices.Clone(names)}
}

// Unnamed calls fn with the name of each member of frame that looks like
// it holds a credential (IsSecretName: token, key, secret, password, …)
// but is not one of r's names: what a user sharing a cassette may have
// missed. It looks where Frame looks (not the envelope, not schemas);
// progressToken, the protocol's own, does not count.
func (r *FrameRedactor) Unnamed(frame []byte, fn func(name string)) {
	jsonrpc.ReplaceMembers(frame, func(path []string, name string) bool {
		if LooksInto(path) && name != "progressToken" && IsSecretName(name) && !r.named(name) {
			fn(name)
		}
		return false
	}, nil)
}

// LooksInto says whether redaction looks at a member under path (the
// names of the members enclosing it): not at the JSON-RPC envelope
// (jsonrpc, id, method, and params, result or error themselves), not
// inside tool and form schemas.
func LooksInto(path []string) bool {
	if len(path) == 0 {
		return false
	}
	for _, p := range path {
		if slices.Contains(schemaMembers, p) {
			return false
		}
	}
	return true
}

// Frame returns frame with the named values blanked (a new slice when n >
// 0; frame itself otherwise) and how many there were. ok is false when the
// frame is not JSON, and so could not be looked into.
func (r *FrameRedactor) Frame(frame []byte) (out []byte, n int, ok bool) {
	return jsonrpc.ReplaceMembers(frame, func(path []string, name string) bool {
		return r.named(name) && LooksInto(path)
	}, redactedJSON)
}

// Rewrite is Frame for store.WriterOptions.Rewrite: m, or a copy of it
// with the named values blanked. A nil redactor changes nothing.
func (r *FrameRedactor) Rewrite(m *store.Message) *store.Message {
	if r == nil {
		return m
	}
	frame, n, _ := r.Frame(m.Frame)
	return withFrame(m, frame, n)
}

// withFrame returns m when n (the values blanked) is 0, else a copy of m
// holding frame: m itself must not change, as the proxy may still be
// forwarding its frame.
func withFrame(m *store.Message, frame []byte, n int) *store.Message {
	if n == 0 {
		return m
	}
	c := *m
	c.Frame = frame
	return &c
}

// named is false for every name on a nil redactor: Frame then blanks
// nothing, and Unnamed names every member that looks like a credential.
func (r *FrameRedactor) named(name string) bool {
	if r == nil {
		return false
	}
	for _, n := range r.names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
