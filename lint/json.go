package lint

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"slices"
)

// objectMembers decodes a JSON object one level deep; nil when raw is not
// an object.
func objectMembers(raw json.RawMessage) map[string]json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// member returns one member of a JSON object, nil when absent.
func member(raw json.RawMessage, name string) json.RawMessage {
	return objectMembers(raw)[name]
}

func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// canonical is a scalar's JSON text with a string's escapes resolved, so
// that "a" and "\u0061" name the same token. Numbers keep their text.
func canonical(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if s, ok := stringOf(raw); ok {
		b, _ := json.Marshal(s)
		return string(b)
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// jsonType names a value's JSON Schema type: "object", "array", "string",
// "integer" (a number without fraction or exponent), "number", "boolean",
// "null".
func jsonType(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "number"
	}
	return "integer"
}

func sortedRequests(m map[string]*request) []*request {
	return slices.SortedFunc(maps.Values(m), func(a, b *request) int { return cmp.Compare(a.seq, b.seq) })
}
