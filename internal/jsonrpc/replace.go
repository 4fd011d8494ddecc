package jsonrpc

import "slices"

// ReplaceMembers returns a copy of the JSON value b in which the value of
// every object member that match accepts is replaced by with; every other
// byte stays as it was, so a frame keeps its key order, spacing and
// escapes. match gets the names of the members whose values enclose the
// member, outermost first (empty for a member of b itself, or of an
// object in a top-level array), and the member's own name. A replaced
// value's own members are not looked at. n counts the values replaced. When b is not one valid JSON
// value (white space around it allowed), ok is false and b is returned as
// it is; when nothing matched, out is b itself.
//
// It exists so that a cassette can be shared without the secrets its
// frames carry (mcpspy export --redact).
func ReplaceMembers(b []byte, match func(path []string, name string) bool, with []byte) (out []byte, n int, ok bool) {
	return ReplaceMemberValues(b, func(path []string, name string, _ []byte) bool { return match(path, name) }, with)
}

// ReplaceMemberValues is ReplaceMembers whose match also sees the
// member's value, as written (a string with its quotes and escapes).
func ReplaceMemberValues(b []byte, match func(path []string, name string, value []byte) bool, with []byte) (out []byte, n int, ok bool) {
	type span struct{ start, end int }
	var spans []span
	s := scanner{b: b}
	s.visit = func(key []byte, escaped bool, vs, ve int) {
		if match(s.path, keyName(key, escaped), s.b[vs:ve]) {
			spans = append(spans, span{vs, ve})
		}
	}
	if _, _, valid := s.value(); !valid || !s.atEnd() {
		return b, 0, false
	}
	if len(spans) == 0 {
		return b, 0, true
	}
	// Members are visited inner first; in the order of where they start,
	// an outer value comes before the members inside it, which it covers.
	slices.SortFunc(spans, func(x, y span) int { return x.start - y.start })
	out = make([]byte, 0, len(b))
	last := 0
	for _, sp := range spans {
		if sp.start < last {
			continue
		}
		out = append(append(out, b[last:sp.start]...), with...)
		last = sp.end
		n++
	}
	return append(out, b[last:]...), n, true
}
