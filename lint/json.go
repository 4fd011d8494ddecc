package lint

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// objectMembers splits a JSON object one level deep; nil when raw is not
// an object. Values share raw's memory. (jsonrpc's scanner, not
// encoding/json: lint reads every frame of a cassette, and decoding each
// member's value into a copy was most of its cost.)
func objectMembers(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	ok := jsonrpc.Members(raw, func(name, value []byte) {
		if m == nil {
			m = make(map[string]json.RawMessage, 4)
		}
		m[string(name)] = value
	})
	if !ok {
		return nil
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m
}

// member returns one member of a JSON object, nil when absent or when raw
// is not an object.
func member(raw json.RawMessage, name string) json.RawMessage {
	return jsonrpc.Member(raw, name)
}

func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonType names a value's JSON Schema type (jsonrpc.SchemaType).
func jsonType(raw json.RawMessage) string { return jsonrpc.SchemaType(raw) }

func sortedRequests(m map[string]*request) []*request {
	return slices.SortedFunc(maps.Values(m), func(a, b *request) int { return cmp.Compare(a.seq, b.seq) })
}
