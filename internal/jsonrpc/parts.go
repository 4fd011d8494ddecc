package jsonrpc

import "math"

// Parts says where the members of a JSON-RPC message that a replay reads
// lie in its frame: each a span of the frame, found by a reader that
// validated the frame anyway (the JSONL reader, scanning each line). A
// later reader of the frame can take them instead of scanning it again.
//
// Member names are compared as written, not unescaped ("\u0069d" is not
// "id"), and the last of a repeated name counts: what RawMembers shows a
// caller that keeps the last value of each name it looks for.
type Parts struct {
	ID, Method, Params, Result, Error Span
}

// Span is a value's place in its frame: offsets of its first byte and
// just past its last. The zero Span is a member that is absent (no value
// starts at offset 0 of an object).
type Span struct{ Start, End uint32 }

// Of returns the span's bytes of frame, or nil when the member is absent.
func (s Span) Of(frame []byte) []byte {
	if s.End == 0 {
		return nil
	}
	return frame[s.Start:s.End:s.End]
}

// note records a member of the object at base.
func (p *Parts) note(key []byte, vs, ve, base int) {
	sp := Span{uint32(vs - base), uint32(ve - base)}
	switch string(key) {
	case `"id"`:
		p.ID = sp
	case `"method"`:
		p.Method = sp
	case `"params"`:
		p.Params = sp
	case `"result"`:
		p.Result = sp
	case `"error"`:
		p.Error = sp
	}
}

// MembersSplit is Members that also splits one member's value, a JSON-RPC
// message, in the same pass: when the last member of b named name (as
// Members names it, unescaped) has an object for its value, parts gets
// where that object's members lie, relative to the object's first byte,
// and split is true. Members then RawMembers of the value would read its
// bytes twice; loading a JSONL export, where every line holds a frame, is
// dominated by reading them. (So it is written out, rather than made of
// the scanner's callbacks: this way takes nearly half the instructions.)
func MembersSplit(b []byte, name string, parts *Parts, fn func(name, value []byte)) (ok, split bool) {
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false, false
	}
	if i = SkipWS(b, i+1); i < len(b) && b[i] == '}' {
		return SkipWS(b, i+1) == len(b), false
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false, false
		}
		ks := i
		ke, escaped, ok := skipString(b, i)
		if !ok {
			return false, false
		}
		if i = SkipWS(b, ke); i >= len(b) || b[i] != ':' {
			return false, false
		}
		key := b[ks+1 : ke-1]
		if escaped {
			decoded, _ := stringValue(b[ks:ke])
			key = []byte(decoded)
		}
		vs := SkipWS(b, i+1)
		switch {
		case string(key) == name && vs < len(b) && b[vs] == '{':
			var p Parts
			if i, ok = splitObject(b, vs, &p); !ok {
				return false, false
			}
			// A frame past 4 GiB, not a practical one, is not split: its
			// spans would not fit.
			if split = uint64(i-vs) <= math.MaxUint32; split {
				*parts = p
			}
		default:
			if string(key) == name {
				split = false // the last one counts
			}
			if i, ok = skipValue(b, vs, 1); !ok {
				return false, false
			}
		}
		fn(key, b[vs:i])
		if i = SkipWS(b, i); i >= len(b) {
			return false, false
		}
		switch b[i] {
		case ',':
			i = SkipWS(b, i+1)
		case '}':
			ok = SkipWS(b, i+1) == len(b)
			return ok, ok && split
		default:
			return false, false
		}
	}
}

// SplitValue validates the object at b[i], the value of a member of an
// outermost object (as MembersSplit meets it), and returns the index just
// past it. When split, p holds where its members lie, relative to b[i]
// (an object past 4 GiB is not split). For a reader that checks the rest
// of the outermost object itself.
func SplitValue(b []byte, i int, p *Parts) (end int, split, ok bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false, false
	}
	var q Parts
	if end, ok = splitObject(b, i, &q); ok && uint64(end-i) <= math.MaxUint32 {
		*p, split = q, true
	}
	return end, split, ok
}

// splitObject skips the object at b[i], a member of an outermost one, and
// notes its members in p.
func splitObject(b []byte, i int, p *Parts) (int, bool) {
	start := i
	if i = SkipWS(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		ks := i
		ke, _, ok := skipString(b, i)
		if !ok {
			return ke, false
		}
		if i = SkipWS(b, ke); i >= len(b) || b[i] != ':' {
			return i, false
		}
		vs := SkipWS(b, i+1)
		if i, ok = skipValue(b, vs, 2); !ok {
			return i, false
		}
		p.note(b[ks:ke], vs, i, start)
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
