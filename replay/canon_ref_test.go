package replay

import (
	"bytes"
	"encoding/json"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// The canonical form as an earlier version wrote it, one nested object
// at a time: simple, and slower. canonizer must write exactly what it
// wrote, since match keys must not change (FuzzCanonParams).

// appendCanonTokenRef is appendCanonToken on appendCanonRef.
func appendCanonTokenRef(dst []byte, method string, params json.RawMessage) (out, token []byte, ok bool) {
	p := bytes.Trim(params, " \t\r\n")
	if len(p) == 0 || string(p) == "null" || string(p) == "{}" {
		return dst, nil, true
	}
	if p[0] != '{' { // objects check their own end
		if end, err := skipValue(p, 0); err != nil || end != len(p) {
			return dst, nil, false
		}
	}
	top := volatileTopKeys(method)
	drop := func(depth int, key, val []byte) bool {
		switch depth {
		case metaDepth:
			if string(key) == "progressToken" {
				token = val
				return true
			}
			return isVolatileMetaKey(string(key))
		case 0:
			for _, k := range top {
				if k == string(key) {
					return true
				}
			}
			if argumentsOptional(method) && string(key) == "arguments" {
				v := bytes.Join(bytes.Fields(val), nil) // nothing inside is dropped
				return string(v) == "{}" || string(v) == "null"
			}
		}
		return false
	}
	if taskPresenceOnly(method) {
		// params.task counts by its presence: written as {}.
		var err error
		if p, err = withTaskShaped(p); err != nil {
			return dst, nil, false
		}
	}
	out, err := appendCanonRef(dst, p, 0, drop)
	if err != nil {
		return dst, nil, false
	}
	return out, token, true
}

// withTaskShaped returns the params object p with the value of its top
// "task" members replaced by {}; other values are left as they are.
func withTaskShaped(p []byte) ([]byte, error) {
	if p[0] != '{' {
		return p, nil
	}
	var ms []member
	ms, err := members(p, ms)
	if err != nil {
		return nil, err
	}
	out := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(out, m.raw...), ':')
		if string(m.key) == "task" {
			out = append(out, '{', '}')
		} else {
			out = append(out, m.val...)
		}
	}
	return append(out, '}'), nil
}

// dropFunc decides whether a member of the top params object (depth 0) or
// of its _meta (metaDepth) is left out; it sees the raw value too.
type dropFunc func(depth int, key, val []byte) bool

// skipValue returns the index just past the JSON value starting at i
// (white space before it allowed).
func skipValue(b []byte, i int) (int, error) {
	end, ok := jsonrpc.SkipValue(b, i)
	if !ok {
		return 0, errSyntax
	}
	return end, nil
}

type member struct {
	key []byte // decoded (escapes resolved), for sorting and drop
	raw []byte // the key as written, quotes included
	val []byte
}

// members appends the members of the object b to ms; b must hold that one
// object and nothing else.
func members(b []byte, ms []member) ([]member, error) {
	err := objectFields(b, func(raw, val []byte) {
		key := raw[1 : len(raw)-1]
		if bytes.IndexByte(raw, '\\') >= 0 {
			key = []byte(keyString(raw))
		}
		ms = append(ms, member{key: key, raw: raw, val: val})
	})
	return ms, err
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

// appendCanonRef writes the value b in canonical form: no white space, object
// keys sorted, strings re-escaped uniformly, numbers by value. drop, if
// not nil, is asked about each member of the top object (depth 0) and of
// its "_meta" object.
func appendCanonRef(dst, b []byte, depth int, drop dropFunc) ([]byte, error) {
	i := jsonrpc.SkipWS(b, 0)
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
			if dst, err = appendCanonRef(dst, m.val, sub, drop); err != nil {
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
		dst = append(dst, '[')
		first := true
		var err error
		valid := jsonrpc.Elements(b[i:], func(v []byte) {
			if err != nil {
				return
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst, err = appendCanonRef(dst, v, depth+1, drop)
		})
		if !valid || err != nil {
			return nil, errSyntax
		}
		return append(dst, ']'), nil
	case '"':
		end, err := skipValue(b, i)
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
	if b[i] == '-' || (b[i] >= '0' && b[i] <= '9') {
		return appendNumber(dst, b[i:end]), nil // held to big.Rat by TestAppendNumber
	}
	return append(dst, b[i:end]...), nil
}
