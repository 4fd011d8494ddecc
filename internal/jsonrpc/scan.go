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

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value validates and skips one JSON value, returning its span.
func (s *scanner) value() (start, end int, ok bool) {
	s.ws()
	start = s.i
	if s.i >= len(s.b) {
		return start, start, false
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
	s.i++
	for s.i < len(s.b) {
		// Most of a frame's bytes are string contents with nothing to
		// check: look at them eight at a time and go straight to the first
		// that ends the string or needs a look (this loop was the largest
		// single cost of loading a .jsonl cassette).
		if s.i+8 <= len(s.b) {
			if m := specialBytes(binary.LittleEndian.Uint64(s.b[s.i:])); m == 0 {
				s.i += 8
				continue
			} else {
				s.i += bits.TrailingZeros64(m) / 8
			}
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, true
		case c < 0x20:
			return escaped, false
		case c == '\\':
			escaped = true
			s.i++
			if s.i >= len(s.b) {
				return escaped, false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+4 >= len(s.b) {
					return escaped, false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return escaped, false
					}
				}
				s.i += 5
			default:
				return escaped, false
			}
		default:
			s.i++
		}
	}
	return escaped, false
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

// number validates the JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (s *scanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
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
	s := scanner{b: b, i: i}
	_, end, ok = s.value()
	return end, ok
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

// String decodes a JSON string value; ok is false if v is not a string.
func String(v []byte) (string, bool) { return stringValue(v) }
