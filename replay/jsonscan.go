package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Canonical params for matching. Loading a 100k-interaction cassette
// parses every frame, and encoding/json's generic decoding (maps,
// interfaces, a validation pass before each decode) made that slower than
// the 300 ms the first answer may take. Validation and slicing come from
// internal/jsonrpc's one-pass scanner; this file writes canonical params
// without building maps.

var errSyntax = errors.New("invalid JSON")

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

// maxNesting is encoding/json's nesting limit (and internal/jsonrpc's): a
// value nested deeper is not valid JSON.
const maxNesting = 10000

// canonizer writes a value in canonical form: no white space, object keys
// sorted, strings re-escaped uniformly, numbers by value (appendNumber). It validates
// as it writes, in one pass over its input: loading a large cassette
// canonicalizes every recorded request's params, and re-scanning each
// nested object as it was reached (as an earlier version did) made nested
// params cost several passes.
type canonizer struct {
	b []byte
	// top names the members of the top object left out (volatileTopKeys).
	top []string
	// taskShape: a "task" member of the top object is written as {},
	// whatever it holds (taskPresenceOnly).
	taskShape bool
	// argsOptional: an "arguments" member of the top object that is {} or
	// null is left out (argumentsOptional).
	argsOptional bool
	// token is the last _meta.progressToken left out, raw.
	token []byte
	// redacted says a string written was "[redacted]": only then can
	// redactedNames.add find a member with that value.
	redacted bool
	// keys holds the decoded keys that had escapes.
	keys []byte
}

// drop reports whether a member of the top object (depth 0) or of its
// "_meta" object (metaDepth) is left out; it sees the raw value too.
// (A method, not a func value: a closure would cost an allocation per
// request.)
func (c *canonizer) drop(depth int, key, val []byte) bool {
	switch depth {
	case metaDepth:
		if string(key) == "progressToken" {
			c.token = val
			return true
		}
		return isVolatileMetaKey(string(key))
	case 0:
		for _, k := range c.top {
			if k == string(key) {
				return true
			}
		}
	}
	return false
}

// canonMember is a member written by canonizer.value: where its key lies,
// decoded, for sorting (in the input, or in canonizer.keys when it had
// escapes), and where "key":value lies in the output. (Places, not
// slices: with no pointers in it, an array of them costs no write
// barriers.)
type canonMember struct {
	ks, ke     int
	start, end int
	esc        bool
}

// key returns m's key, decoded.
func (c *canonizer) key(m *canonMember) []byte {
	if m.esc {
		return c.keys[m.ks:m.ke]
	}
	return c.b[m.ks:m.ke]
}

// canonStack is how many members an object may have before canonizer
// takes memory for them: params objects are small, and the array is
// zeroed for every object.
const canonStack = 8

// value appends the canonical form of the value at c.b[i:] (white space
// before it allowed) to dst and returns the index just past it. depth is
// as drop sees it; nest counts the arrays and objects around the value.
func (c *canonizer) value(dst []byte, i, depth, nest int) ([]byte, int, bool) {
	b := c.b
	i = jsonrpc.SkipWS(b, i)
	if i >= len(b) {
		return dst, i, false
	}
	switch b[i] {
	case '{':
		return c.object(dst, i, depth, nest+1)
	case '[':
		if nest+1 > maxNesting {
			return dst, i, false
		}
		dst = append(dst, '[')
		i = jsonrpc.SkipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return append(dst, ']'), i + 1, true
		}
		for {
			var ok bool
			if dst, i, ok = c.value(dst, i, depth+1, nest+1); !ok {
				return dst, i, false
			}
			i = jsonrpc.SkipWS(b, i)
			switch {
			case i < len(b) && b[i] == ',':
				dst = append(dst, ',')
				i++
			case i < len(b) && b[i] == ']':
				return append(dst, ']'), i + 1, true
			default:
				return dst, i, false
			}
		}
	case '"':
		end, escaped, ok := jsonrpc.SkipString(b, i)
		if !ok {
			return dst, i, false
		}
		start := len(dst)
		if raw := b[i:end]; escaped {
			dst = appendString(dst, keyString(raw))
		} else {
			dst = append(dst, raw...)
		}
		if len(dst)-start == len(redactedJSON) && string(dst[start:]) == string(redactedJSON) {
			c.redacted = true
		}
		return dst, end, true
	}
	end, ok := jsonrpc.SkipValue(b, i) // a number or a literal
	if ok && (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
		return appendNumber(dst, b[i:end]), end, true
	}
	return append(dst, b[i:end]...), end, ok
}

// appendNumber appends the valid JSON number lit in canonical form: its
// value, written one way. Clients write one value differently (Python
// sends 2.0 where JavaScript sends 2; 1e2, 100 and 100.0 are one number),
// and a recorded request must match a live one that means the same.
// Exact: the decimal digits are kept, never rounded through a float, so
// numbers of any length and precision stay apart when their values do.
// The form is JavaScript's: an integer in plain digits up to 21 of them,
// a fraction with its point, else d.ddde±N; "-0" is "0".
func appendNumber(dst, lit []byte) []byte {
	plain := true // an integer as written: already canonical (JSON has no leading zeros)
	for k, c := range lit {
		if (c < '0' || c > '9') && (k > 0 || c != '-') {
			plain = false
			break
		}
	}
	if plain {
		if string(lit) == "-0" {
			return append(dst, '0')
		}
		return append(dst, lit...)
	}
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	intEnd := 0
	for intEnd < len(lit) && lit[intEnd] >= '0' && lit[intEnd] <= '9' {
		intEnd++
	}
	frac, rest := []byte(nil), lit[intEnd:]
	if len(rest) > 0 && rest[0] == '.' {
		k := 1
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		frac, rest = rest[1:k], rest[k:]
	}
	exp := 0
	if len(rest) > 0 { // e or E, a sign perhaps, digits
		e := rest[1:]
		expNeg := e[0] == '-'
		if e[0] == '-' || e[0] == '+' {
			e = e[1:]
		}
		for len(e) > 1 && e[0] == '0' {
			e = e[1:]
		}
		if len(e) > 9 { // past any sensible value: kept as written
			if neg {
				dst = append(dst, '-')
			}
			return append(dst, lit...)
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
		}
		if expNeg {
			exp = -exp
		}
	}
	// The value is digits × 10^exp10, digits without leading or trailing
	// zeros.
	var buf [64]byte
	digits := append(append(buf[:0], lit[:intEnd]...), frac...)
	exp10 := exp - len(frac)
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp10++
	}
	if len(digits) == 0 {
		return append(dst, '0')
	}
	if neg {
		dst = append(dst, '-')
	}
	point := len(digits) + exp10 // where the decimal point goes
	switch {
	case exp10 >= 0 && point <= 21:
		dst = append(dst, digits...)
		for range exp10 {
			dst = append(dst, '0')
		}
	case point > 0 && point <= 21:
		dst = append(append(append(dst, digits[:point]...), '.'), digits[point:]...)
	case point > -6 && point <= 0:
		dst = append(dst, '0', '.')
		for range -point {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(append(dst, '.'), digits[1:]...)
		}
		dst = append(dst, 'e')
		if point-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(point-1), 10)
	}
	return dst
}

// object is value for the object at c.b[i]. Members are written as they
// come, then put in order when they came out of order.
func (c *canonizer) object(dst []byte, i, depth, nest int) ([]byte, int, bool) {
	b := c.b
	if nest > maxNesting {
		return dst, i, false
	}
	start := len(dst)
	dst = append(dst, '{')
	var stack [canonStack]canonMember
	ms := stack[:0]
	sorted := true
	i = jsonrpc.SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return dst, i, false
			}
			ke, escaped, ok := jsonrpc.SkipString(b, i)
			if !ok {
				return dst, i, false
			}
			raw := b[i:ke]
			m := canonMember{ks: i + 1, ke: ke - 1}
			key := raw[1 : len(raw)-1]
			if escaped {
				m.ks = len(c.keys)
				c.keys = append(c.keys, keyString(raw)...)
				m.ke, m.esc = len(c.keys), true
				key = c.keys[m.ks:m.ke]
			}
			i = jsonrpc.SkipWS(b, ke)
			if i >= len(b) || b[i] != ':' {
				return dst, i, false
			}
			sub := depth + 1
			if depth == 0 && string(key) == "_meta" {
				sub = metaDepth
			}
			mark := len(dst)
			if len(ms) > 0 {
				dst = append(dst, ',')
			}
			m.start = len(dst)
			if escaped {
				dst = appendString(dst, string(key))
			} else {
				dst = append(dst, raw...)
			}
			dst = append(dst, ':')
			vs := jsonrpc.SkipWS(b, i+1)
			valStart := len(dst)
			if dst, i, ok = c.value(dst, vs, sub, nest); !ok {
				return dst, i, false
			}
			if depth == 0 && c.taskShape && string(key) == "task" {
				dst = append(dst[:valStart], '{', '}')
			}
			switch {
			case (depth == 0 || depth == metaDepth) && c.drop(depth, key, b[vs:i]):
				dst = dst[:mark]
			case sub == metaDepth && string(dst[valStart:]) == "{}":
				dst = dst[:mark] // _meta with nothing left
			case depth == 0 && c.argsOptional && string(key) == "arguments" && (string(dst[valStart:]) == "{}" || string(dst[valStart:]) == "null"):
				dst = dst[:mark] // no arguments, said one of three ways
			default:
				m.end = len(dst)
				if len(ms) > 0 && bytes.Compare(key, c.key(&ms[len(ms)-1])) < 0 {
					sorted = false
				}
				ms = append(ms, m)
			}
			i = jsonrpc.SkipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = jsonrpc.SkipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return dst, i, false
		}
	}
	if depth == 0 && len(ms) == 0 {
		return dst[:start], i, true
	}
	switch {
	case sorted:
	case len(ms) <= sortInPlaceMax:
		c.sortInPlace(dst, ms)
	default:
		// Many members: a stable sort, so that members under one key keep
		// their order, then the members are written again in order past
		// the end and moved back over the first writing.
		slices.SortStableFunc(ms, func(x, y canonMember) int { return bytes.Compare(c.key(&x), c.key(&y)) })
		end := len(dst)
		for k, m := range ms {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, dst[m.start:m.end]...)
		}
		dst = dst[:start+1+copy(dst[start+1:], dst[end:])]
	}
	return append(dst, '}'), i, true
}

// sortInPlaceMax is how many members an object may have for sortInPlace,
// whose insertion sort moves bytes for each member out of place.
const sortInPlaceMax = 16

// sortInPlace puts the members ms, written comma-separated in dst, in key
// order where they lie, stably (members under one key keep their order).
// Writing them again past the end, as objects with more members are,
// would cost the object's size once more: for a tools/call, whose "name"
// comes before "arguments" as every client writes it, the size of the
// whole request, 64 MiB for a 64 MiB upload.
func (c *canonizer) sortInPlace(dst []byte, ms []canonMember) {
	var spare [64]byte // holds a small member as it moves, which most are
	tmp := spare[:0]
	for a := 1; a < len(ms); a++ {
		x := ms[a]
		xk := c.key(&x)
		b := a
		for b > 0 && bytes.Compare(xk, c.key(&ms[b-1])) < 0 {
			b--
		}
		if b == a {
			continue
		}
		// dst[lo:x.end] is the members b…a-1, a comma, then x: x goes
		// first, the others move up past it and its comma.
		lo, n := ms[b].start, x.end-x.start
		tmp = swapAround(dst[lo:x.end], n, tmp)
		for k := a; k > b; k-- {
			ms[k] = ms[k-1]
			ms[k].start += n + 1
			ms[k].end += n + 1
		}
		x.start, x.end = lo, lo+n
		ms[b] = x
	}
}

// swapAround turns seg, which is A "," X with X its last n bytes, into
// X "," A, keeping the shorter of the two in tmp (which it returns, to
// be used again) while the longer moves.
func swapAround(seg []byte, n int, tmp []byte) []byte {
	la := len(seg) - n - 1 // A's length
	if n <= la {
		tmp = append(tmp[:0], seg[la+1:]...) // X
		copy(seg[n+1:], seg[:la])
		copy(seg, tmp)
	} else {
		tmp = append(tmp[:0], seg[:la]...) // A
		copy(seg, seg[la+1:])
		copy(seg[n+1:], tmp)
	}
	seg[n] = ','
	return tmp
}

// metaDepth marks the members of params._meta for drop; far below zero so
// that objects nested in _meta never count as the top.
const metaDepth = -1 << 20

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
