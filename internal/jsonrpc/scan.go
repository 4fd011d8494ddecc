package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The classifier runs on every recorded frame, so it does not use
// encoding/json's reflection: it validates the frame in one pass (to the
// same grammar as json.Valid) and notes where the members it needs lie.
// A fuzz test holds it to json.Valid.

type scanner struct {
	b []byte
	i int
	// depth counts the objects and arrays open at i.
	depth int
	// visit, if not nil, is called for every member of every object, at
	// any depth, after its value was scanned: inner members first. path
	// then holds the names of the members whose values enclose it,
	// outermost first (arrays add nothing).
	visit func(key []byte, escaped bool, vs, ve int)
	path  []string
}

// maxDepth is encoding/json's nesting limit: json.Valid rejects a value
// nested deeper, so the scanner does too (found by FuzzClassify).
const maxDepth = 10000

func (s *scanner) ws() { s.i = SkipWS(s.b, s.i) }

// value validates and skips one JSON value, returning its span.
func (s *scanner) value() (start, end int, ok bool) {
	s.ws()
	start = s.i
	if s.i >= len(s.b) {
		return start, start, false
	}
	if s.visit == nil {
		// Nothing looks inside the value: skipValue, with the state in
		// registers, not in s, does the same work in fewer instructions.
		s.i, ok = skipValue(s.b, s.i, s.depth)
		return start, s.i, ok
	}
	switch c := s.b[s.i]; {
	case c == '{':
		ok = s.object(nil)
	case c == '[':
		ok = s.array(nil)
	case c == '"':
		_, ok = s.str()
	case c == 't':
		ok = s.lit("true")
	case c == 'f':
		ok = s.lit("false")
	case c == 'n':
		ok = s.lit("null")
	default:
		ok = s.number()
	}
	return start, s.i, ok
}

// object validates an object at s.i. member, if not nil, is called with
// each key's raw span (quotes included) and its value's span.
func (s *scanner) object(member func(key []byte, escaped bool, vs, ve int)) bool {
	s.i++ // '{'
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		ks := s.i
		escaped, ok := s.str()
		if !ok {
			return false
		}
		ke := s.i
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if s.visit != nil {
			s.path = append(s.path, keyName(s.b[ks:ke], escaped))
		}
		vs, ve, ok := s.value()
		if !ok {
			return false
		}
		if member != nil {
			member(s.b[ks:ke], escaped, vs, ve)
		}
		if s.visit != nil {
			s.path = s.path[:len(s.path)-1]
			s.visit(s.b[ks:ke], escaped, vs, ve)
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// array validates an array at s.i. element, if not nil, is called with
// each element's span.
func (s *scanner) array(element func(vs, ve int)) bool {
	s.i++ // '['
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		vs, ve, ok := s.value()
		if !ok {
			return false
		}
		if element != nil {
			element(vs, ve)
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// str validates a string at s.i (the opening quote) and reports whether it
// holds escapes.
func (s *scanner) str() (escaped, ok bool) {
	s.i, escaped, ok = skipString(s.b, s.i)
	return escaped, ok
}

// The skip functions validate and skip one JSON value that starts at b[i],
// with no white space before it unless they say so, and return the index
// just past it (on an error, somewhere before the end). They are the
// scanner without its callbacks: everything in locals, which the
// compiler keeps in registers. Loading a JSONL cassette is mostly them.

// SkipWS returns the index of the first byte at or after i that is not
// JSON white space.
func SkipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue skips the value at b[i], white space before it allowed.
// depth counts the objects and arrays open around it.
func skipValue(b []byte, i, depth int) (int, bool) {
	i = SkipWS(b, i)
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		end, _, ok := skipString(b, i)
		return end, ok
	case '{':
		return skipObject(b, i, depth+1)
	case '[':
		return skipArray(b, i, depth+1)
	case 't':
		return skipLiteral(b, i, "true")
	case 'f':
		return skipLiteral(b, i, "false")
	case 'n':
		return skipLiteral(b, i, "null")
	}
	return skipNumber(b, i)
}

// skipObject skips the object at b[i], the depth-th open.
func skipObject(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, _, ok = skipString(b, i); !ok {
			return i, false
		}
		if i = SkipWS(b, i); i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = skipValue(b, i+1, depth); !ok {
			return i, false
		}
		if i = SkipWS(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = SkipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// skipArray skips the array at b[i], the depth-th open.
func skipArray(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = skipValue(b, i, depth); !ok {
			return i, false
		}
		if i = SkipWS(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// skipLiteral skips word, which must be at b[i].
func skipLiteral(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// skipString skips the string at b[i] (its opening quote) and reports
// whether it holds escapes.
func skipString(b []byte, i int) (end int, escaped, ok bool) {
	i++
	for {
		// Most of a frame's bytes are string contents with nothing to
		// check: look at them eight at a time and go straight to the first
		// that ends the string or needs a look (this loop was the largest
		// single cost of loading a .jsonl cassette).
		for i+8 <= len(b) {
			if m := specialBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			return i, escaped, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return i, escaped, false
		case c == '\\':
			escaped = true
			i++
			if i >= len(b) {
				return i, escaped, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(b) {
					return i, escaped, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, escaped, false
					}
				}
				i += 5
			default:
				return i, escaped, false
			}
		default:
			i++
		}
	}
}

// specialBytes marks (with its top bit) each of the eight bytes of w, in
// memory order, that ends a string or needs a closer look: '"', '\\', a
// control byte. It uses the "some byte is zero" (or "below n") bit trick
// on the whole word; past the first marked byte a mark may be false (a
// borrow), so only the lowest one is to be trusted.
func specialBytes(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	quote := w ^ (lo * '"')
	backslash := w ^ (lo * '\\')
	found := (quote - lo) &^ quote
	found |= (backslash - lo) &^ backslash
	found |= (w - lo*0x20) &^ w
	return found & hi
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number validates the JSON number grammar at s.i.
func (s *scanner) number() (ok bool) {
	s.i, ok = skipNumber(s.b, s.i)
	return ok
}

// skipNumber skips the number at b[i]:
// -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func skipNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// digits returns the index past the decimal digits from b[i].
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// keyName decodes a raw key span (with quotes).
func keyName(key []byte, escaped bool) string {
	if escaped {
		name, _ := stringValue(key)
		return name
	}
	return string(key[1 : len(key)-1])
}

// keyIs compares a raw key span (with quotes) to name.
func keyIs(key []byte, escaped bool, name string) bool {
	if !escaped {
		return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
	}
	var k string
	return json.Unmarshal(key, &k) == nil && k == name
}

// members scans an object span and calls fn for each member, by decoded
// key. The span is known to be valid.
func members(b []byte, fn func(key []byte, escaped bool, value []byte)) {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return
	}
	s.object(func(key []byte, escaped bool, vs, ve int) { fn(key, escaped, b[vs:ve]) })
}

// stringValue decodes a JSON string span; ok=false if it is not a string.
func stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' {
			plain = false
			break
		}
	}
	// encoding/json turns invalid UTF-8 into U+FFFD; so do we, through it.
	if plain && utf8.Valid(inner) {
		return string(inner), true
	}
	var out string
	if json.Unmarshal(v, &out) != nil {
		return "", false
	}
	return out, true
}

func intValue(v []byte) (int, bool) {
	n, err := strconv.Atoi(string(v))
	return n, err == nil
}

// SkipValue validates the JSON value that starts at b[i] (white space
// before it allowed) and returns the index just past it.
func SkipValue(b []byte, i int) (end int, ok bool) {
	return skipValue(b, i, 0)
}

// Valid reports whether b is one JSON value, white space around it
// allowed, as json.Valid does (FuzzClassify holds them to agreement), at
// several times its speed: json.Valid steps through a state machine
// byte by byte, where this scanner passes over string contents eight
// bytes at a time.
func Valid(b []byte) bool {
	end, ok := skipValue(b, 0, 0)
	return ok && SkipWS(b, end) == len(b)
}

// SkipString validates the JSON string at b[i] (its opening quote) and
// returns the index just past it; escaped says it holds escapes.
func SkipString(b []byte, i int) (end int, escaped, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false, false
	}
	return skipString(b, i)
}

// RawMembers validates b as one JSON object (surrounding white space
// allowed) and calls fn with each member's key as written, quotes
// included, and its value; both share b's memory. It reports whether b was
// a valid object.
func RawMembers(b []byte, fn func(rawKey, value []byte)) bool {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return false
	}
	ok := s.object(func(key []byte, _ bool, vs, ve int) { fn(key, b[vs:ve]) })
	return ok && s.atEnd()
}

// Elements validates b as one JSON array (surrounding white space allowed)
// and calls fn with each element's bytes.
func Elements(b []byte, fn func(value []byte)) bool {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '[' {
		return false
	}
	return s.array(func(vs, ve int) { fn(b[vs:ve]) }) && s.atEnd()
}

// Members validates b as one JSON object (surrounding white space allowed)
// and calls fn with each member's name, unescaped, and its value's raw
// bytes; both share b's memory unless the name had escapes. It reports
// whether b was a valid object. It is the fast path for line formats built
// on JSON objects (the JSONL export), where encoding/json's reflection
// dominates the cost; compare names with switch string(name), which does
// not allocate.
func Members(b []byte, fn func(name, value []byte)) bool {
	return RawMembers(b, func(key, value []byte) {
		name := key[1 : len(key)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			decoded, _ := stringValue(key)
			name = []byte(decoded)
		}
		fn(name, value)
	})
}

// Member returns the raw value at path in the JSON object b (each name a
// member of the object before it: Member(frame, "params", "taskId")),
// sharing b's memory; nil when a member is missing or a value on the way
// is not a valid object. Names compare unescaped; of repeated names the
// last counts, as in encoding/json.
func Member(b []byte, path ...string) []byte {
	for _, name := range path {
		var next []byte
		if !Members(b, func(n, value []byte) {
			if string(n) == name {
				next = value
			}
		}) || next == nil {
			return nil
		}
		b = next
	}
	return b
}

// String decodes a JSON string value; ok is false if v is not a string.
func String(v []byte) (string, bool) { return stringValue(v) }
