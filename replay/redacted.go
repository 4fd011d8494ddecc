package replay

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Redacted values. mcpspy export --redact NAME writes "[redacted]" for the
// value of every member NAME in a shared cassette's frames; a host replaying
// it sends its own value there. A recorded request whose params hold
// redacted members matches a live request that differs from it in those
// members only: on a miss, the live params are tried again with the same
// members blanked, once for each set of names the method's recorded
// requests blank. A cassette without redacted values never pays for this.

var redactedJSON = []byte(`"` + store.Redacted + `"`)

// redactedNames maps a method to the sets of member names its recorded
// requests hold redacted, each set sorted, each once.
type redactedNames map[string][][]string

// add notes the names that canon, a request's canonical params, holds
// redacted.
func (r redactedNames) add(method string, canon []byte) {
	if !bytes.Contains(canon, redactedJSON) {
		return
	}
	var names []string
	var walk func(v []byte)
	walk = func(v []byte) {
		switch {
		case len(v) > 0 && v[0] == '{':
			jsonrpc.Members(v, func(name, val []byte) {
				if bytes.Equal(val, redactedJSON) {
					if n := string(name); !slices.Contains(names, n) {
						names = append(names, n)
					}
					return
				}
				walk(val)
			})
		case len(v) > 0 && v[0] == '[':
			jsonrpc.Elements(v, walk)
		}
	}
	walk(canon)
	if len(names) == 0 { // "[redacted]" as an array element, not a member
		return
	}
	slices.Sort(names)
	if !slices.ContainsFunc(r[method], func(have []string) bool { return slices.Equal(have, names) }) {
		r[method] = append(r[method], names)
	}
}

// keys calls try with the match key of req's params with each recorded set
// of names blanked (and the ignored members, as every key), until try
// reports a match.
func (r redactedNames) keys(req *Request, ignore []string, try func(key []byte) bool) bool {
	for _, names := range r[req.Method] {
		params, n, ok := jsonrpc.ReplaceMembers(req.Params, func(_ []string, name string) bool {
			_, found := slices.BinarySearch(names, name)
			return found
		}, redactedJSON)
		if !ok || n == 0 {
			continue
		}
		if key, _, ok := appendKey(nil, req.Method, params); ok && try(blankIgnored(key, req.Method, ignore)) {
			return true
		}
	}
	return false
}

// blankRedacted returns params with the members that the other side of a
// comparison holds redacted blanked too, so that a shared, redacted
// cassette compares equal to the recording it came from.
func (r redactedNames) blank(method string, params json.RawMessage) json.RawMessage {
	sets := r[method]
	if len(sets) == 0 {
		return params
	}
	out, _, _ := jsonrpc.ReplaceMembers(params, func(_ []string, name string) bool {
		for _, names := range sets {
			if _, found := slices.BinarySearch(names, name); found {
				return true
			}
		}
		return false
	}, redactedJSON)
	return out
}
