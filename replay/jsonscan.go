package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Canonical params for matching. Loading a 100k-interaction cassette
// parses every frame, and encoding/json's generic decoding (maps,
// interfaces, a validation pass before each decode) made that slower than
// the 300 ms the first answer may take. Validation and slicing come from
// internal/jsonrpc's one-pass scanner; this file writes canonical params
// without building maps.

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
	end, ok := jsonrpc.SkipValue(b, i)
	if !ok {
		return 0, errSyntax
	}
	return end, nil
}

// objectFields calls fn for each member of the object b (raw key bytes
// with quotes, raw value); b must hold that one object and nothing else.
func objectFields(b []byte, fn func(key, val []byte)) error {
	if !jsonrpc.RawMembers(b, fn) {
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
			dst, err = appendCanon(dst, v, depth+1, drop)
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

// rpcFields are the top-level members of a JSON-RPC message that replay
// looks at, as raw values; nil when absent.
type rpcFields struct{ jsonrpc, id, method, params, result, err []byte }

// splitRPC validates the object b and slices out its rpcFields in one pass.
func splitRPC(b []byte) (rpcFields, error) {
	var f rpcFields
	err := objectFields(b, func(k, v []byte) {
		switch string(k) {
		case `"jsonrpc"`:
			f.jsonrpc = v
		case `"id"`:
			f.id = v
		case `"method"`:
			f.method = v
		case `"params"`:
			f.params = v
		case `"result"`:
			f.result = v
		case `"error"`:
			f.err = v
		}
	})
	return f, err
}
