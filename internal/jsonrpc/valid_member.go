package jsonrpc

import "bytes"

// MemberOfValid is Member for bytes already known to be valid JSON (the
// params of a message the replay engine validated as it split it). It
// checks nothing on the way: it finds where each string ends by searching
// for its closing quote, which bytes.IndexByte does many bytes at a time,
// where Member's scanner validates every byte. Looking up _meta in the
// params of a 64 MiB tools/call took a full validating pass for each
// lookup; this takes a few milliseconds.
//
// On bytes that are not valid JSON its answer is unspecified (nil, or
// some part of b), but it always returns: it never panics or loops.
func MemberOfValid(b []byte, path ...string) []byte {
	for _, name := range path {
		next, ok := memberOfValid(b, name)
		if !ok || next == nil {
			return nil
		}
		b = next
	}
	return b
}

// memberOfValid returns the value of the last member named name of the
// object b (names compared unescaped, as Member does); ok is false when
// b is not an object.
func memberOfValid(b []byte, name string) (value []byte, ok bool) {
	ok = rawMembersOfValid(b, func(key, v []byte) {
		if keyIs(key, bytes.IndexByte(key, '\\') >= 0, name) {
			value = v
		}
	})
	return value, ok
}

// MembersOfValid is Members for bytes already known to be valid JSON,
// unchecked as MemberOfValid is: it calls fn with each member's name,
// unescaped, and its value's bytes, and reports whether b is an object.
func MembersOfValid(b []byte, fn func(name, value []byte)) bool {
	return rawMembersOfValid(b, func(key, value []byte) {
		name := key[1 : len(key)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			decoded, _ := stringValue(key)
			name = []byte(decoded)
		}
		fn(name, value)
	})
}

// rawMembersOfValid calls fn with each member of the object b, its key as
// written (quotes included) and its value; ok is false when b is not an
// object, or (not being valid JSON) stops being one part way.
func rawMembersOfValid(b []byte, fn func(key, value []byte)) (ok bool) {
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) && b[i] == '"' {
		keyEnd := endOfString(b, i)
		if keyEnd < 0 {
			return false
		}
		key := b[i:keyEnd]
		i = SkipWS(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		start := SkipWS(b, i+1)
		end := endOfValue(b, start)
		if end < 0 {
			return false
		}
		fn(key, b[start:end])
		i = SkipWS(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return true
		}
		if b[i] != ',' {
			return false
		}
		i = SkipWS(b, i+1)
	}
	return false
}

// endOfString returns the index just past the string that starts at
// b[i] (its opening quote), or -1 if it does not end.
func endOfString(b []byte, i int) int {
	i++
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		// The quote is escaped when an odd number of backslashes
		// precedes it.
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// endOfValue returns the index just past the value that starts at b[i],
// or -1 if it does not end. Objects and arrays are skipped by counting
// brackets outside strings.
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = endOfString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	// A number or a literal ends where a delimiter or white space starts.
	start := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if i == start {
				return -1
			}
			return i
		}
		i++
	}
	return i
}
