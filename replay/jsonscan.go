package replay

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A small JSON scanner for the load path. Loading a 100k-interaction
// cassette parses every frame, and encoding/json's generic decoding (maps,
// interfaces, a validation pass before each decode) made that slower than
// the 300 ms the first answer may take. This scanner validates and slices
// in one pass and writes canonical params without building maps.

var errSyntax = errors.New("invalid JSON")

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at i
// (white space before it allowed).
func skipValue(b []byte, i int) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '{':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			i = skipWS(b, i)
			if i >= len(b) || b[i] != '"' {
				return 0, errSyntax
			}
			var err error
			if i, err = skipString(b, i); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, errSyntax
			}
			if i, err = skipValue(b, i+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, errSyntax
			}
			if b[i] == '}' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, errSyntax
			}
			i++
		}
	case c == '[':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, i); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, errSyntax
			}
			if b[i] == ']' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, errSyntax
			}
			i++
		}
	case c == '"':
		return skipString(b, i)
	case c == 't':
		return skipLit(b, i, "true")
	case c == 'f':
		return skipLit(b, i, "false")
	case c == 'n':
		return skipLit(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		if !validNumber(b[i:j]) {
			return 0, errSyntax
		}
		return j, nil
	}
	return 0, errSyntax
}

func skipLit(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

// skipString returns the index past the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			j++
			if j >= len(b) {
				return 0, errSyntax
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return 0, errSyntax
				}
				j += 4
			default:
				return 0, errSyntax
			}
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return 0, errSyntax
		}
	}
	return 0, errSyntax
}

// objectFields calls fn for each member of the object b (raw key bytes
// with quotes, raw value); b must hold that one object and nothing else.
func objectFields(b []byte, fn func(key, val []byte)) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errSyntax
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			i = skipWS(b, i)
			if i >= len(b) || b[i] != '"' {
				return errSyntax
			}
			ks := i
			var err error
			if i, err = skipString(b, i); err != nil {
				return err
			}
			key := b[ks:i]
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return errSyntax
			}
			vs := skipWS(b, i+1)
			if i, err = skipValue(b, vs); err != nil {
				return err
			}
			fn(key, b[vs:i])
			i = skipWS(b, i)
			if i >= len(b) {
				return errSyntax
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return errSyntax
			}
			i++
		}
	}
	if skipWS(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

// keyString decodes a raw JSON string (quotes included).
func keyString(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// appendString writes s as canonical JSON: escapes only what must be.
func appendString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

type member struct {
	key []byte // decoded (escapes resolved), for sorting and drop
	raw []byte // the key as written, quotes included
	val []byte
}

// members appends the members of the object b to ms; b must hold that one
// object and nothing else.
func members(b []byte, ms []member) ([]member, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ms, errSyntax
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			i = skipWS(b, i)
			if i >= len(b) || b[i] != '"' {
				return ms, errSyntax
			}
			ks := i
			var err error
			if i, err = skipString(b, i); err != nil {
				return ms, err
			}
			raw := b[ks:i]
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return ms, errSyntax
			}
			vs := skipWS(b, i+1)
			if i, err = skipValue(b, vs); err != nil {
				return ms, err
			}
			key := raw[1 : len(raw)-1]
			if bytes.IndexByte(raw, '\\') >= 0 {
				key = []byte(keyString(raw))
			}
			ms = append(ms, member{key: key, raw: raw, val: b[vs:i]})
			i = skipWS(b, i)
			if i >= len(b) {
				return ms, errSyntax
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return ms, errSyntax
			}
			i++
		}
	}
	if skipWS(b, i) != len(b) {
		return ms, errSyntax
	}
	return ms, nil
}

// sortMembers sorts by key; objects are small, so insertion sort, which
// also keeps ms on the caller's stack.
func sortMembers(ms []member) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && bytes.Compare(ms[j].key, ms[j-1].key) < 0; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// dropFunc decides whether a member of the top params object (depth 0) or
// of its _meta (metaDepth) is left out; it sees the raw value too.
type dropFunc func(depth int, key, val []byte) bool

// appendCanon writes the value b in canonical form: no white space, object
// keys sorted, strings re-escaped uniformly, numbers as written. drop, if
// not nil, is asked about each member of the top object (depth 0) and of
// its "_meta" object.
func appendCanon(dst, b []byte, depth int, drop dropFunc) ([]byte, error) {
	i := skipWS(b, 0)
	if i >= len(b) {
		return nil, errSyntax
	}
	switch b[i] {
	case '{':
		var stack [16]member
		all, err := members(b[i:], stack[:0])
		if err != nil {
			return nil, err
		}
		ms := all[:0]
		for _, m := range all {
			if drop != nil && (depth == 0 || depth == metaDepth) && drop(depth, m.key, m.val) {
				continue
			}
			ms = append(ms, m)
		}
		sortMembers(ms)
		start := len(dst)
		dst = append(dst, '{')
		n := 0
		for _, m := range ms {
			mark := len(dst)
			if n > 0 {
				dst = append(dst, ',')
			}
			if bytes.IndexByte(m.raw, '\\') < 0 {
				dst = append(dst, m.raw...)
			} else {
				dst = appendString(dst, string(m.key))
			}
			dst = append(dst, ':')
			sub := depth + 1
			if depth == 0 && string(m.key) == "_meta" {
				sub = metaDepth
			}
			var err error
			valStart := len(dst)
			if dst, err = appendCanon(dst, m.val, sub, drop); err != nil {
				return nil, err
			}
			if sub == metaDepth && string(dst[valStart:]) == "{}" {
				dst = dst[:mark] // _meta with nothing left
				continue
			}
			n++
		}
		dst = append(dst, '}')
		if depth == 0 && n == 0 {
			return dst[:start], nil
		}
		return dst, nil
	case '[':
		end, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		dst = append(dst, '[')
		j := skipWS(b, i+1)
		first := true
		for j < end-1 {
			ve, err := skipValue(b, j)
			if err != nil {
				return nil, err
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			if dst, err = appendCanon(dst, b[skipWS(b, j):ve], depth+1, drop); err != nil {
				return nil, err
			}
			j = skipWS(b, ve)
			if j < end-1 && b[j] == ',' {
				j++
			}
		}
		return append(dst, ']'), nil
	case '"':
		end, err := skipString(b, i)
		if err != nil {
			return nil, err
		}
		raw := b[i:end]
		if bytes.IndexByte(raw, '\\') < 0 {
			return append(dst, raw...), nil
		}
		return appendString(dst, keyString(raw)), nil
	}
	end, err := skipValue(b, i)
	if err != nil {
		return nil, err
	}
	return append(dst, b[i:end]...), nil
}

// metaDepth marks the members of params._meta for drop; far below zero so
// that objects nested in _meta never count as the top.
const metaDepth = -1 << 20

// fieldOf returns the raw value of member name of object b, or nil.
func fieldOf(b []byte, name string) []byte {
	var out []byte
	_ = objectFields(b, func(k, v []byte) {
		if out == nil && keyString(k) == name {
			out = v
		}
	})
	return out
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
