package store

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendHTTPMeta appends the JSON of m, byte for byte what json.Marshal(m)
// gives. It exists for speed: every HTTP frame mcpspy records goes through
// it, and the reflection of json.Marshal (two header maps, keys sorted) was
// about 4% of the proxy's CPU. It must never differ from json.Marshal, or
// cassettes would change: any change to HTTPMeta's fields or tags must be
// made here too (FuzzAppendHTTPMeta checks the two agree). The read side
// still uses json.Unmarshal.
func appendHTTPMeta(dst []byte, m *HTTPMeta) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	var reqBuf, respBuf [16]headerField
	req := sortHeader(reqBuf[:0], m.RequestHeader)
	resp := sortHeader(respBuf[:0], m.ResponseHeader)
	dst = slices.Grow(dst, metaSize(m, req, resp))
	dst = append(dst, '{')
	start := len(dst)
	if m.Method != "" {
		dst = appendJSONString(appendKey(dst, start, `"method":`), m.Method)
	}
	if m.Path != "" {
		dst = appendJSONString(appendKey(dst, start, `"path":`), m.Path)
	}
	if m.Status != 0 {
		dst = strconv.AppendInt(appendKey(dst, start, `"status":`), int64(m.Status), 10)
	}
	if len(m.RequestHeader) > 0 {
		dst = appendHeader(appendKey(dst, start, `"request_header":`), req)
	}
	if len(m.ResponseHeader) > 0 {
		dst = appendHeader(appendKey(dst, start, `"response_header":`), resp)
	}
	if m.Stream != "" {
		dst = appendJSONString(appendKey(dst, start, `"stream":`), m.Stream)
	}
	if m.StreamID != 0 {
		dst = strconv.AppendUint(appendKey(dst, start, `"stream_id":`), m.StreamID, 10)
	}
	if m.EventID != "" {
		dst = appendJSONString(appendKey(dst, start, `"event_id":`), m.EventID)
	}
	if m.EventType != "" {
		dst = appendJSONString(appendKey(dst, start, `"event_type":`), m.EventType)
	}
	if m.Retry != "" {
		dst = appendJSONString(appendKey(dst, start, `"retry":`), m.Retry)
	}
	if len(m.Priming) > 0 {
		dst = appendStrings(appendKey(dst, start, `"priming":`), m.Priming)
	}
	if m.WSOpcode != 0 {
		dst = strconv.AppendInt(appendKey(dst, start, `"ws_opcode":`), int64(m.WSOpcode), 10)
	}
	return append(dst, '}')
}

// metaSize is the length of m's JSON when no string needs escaping (ints
// counted at their widest), so that one allocation usually holds it all.
func metaSize(m *HTTPMeta, req, resp []headerField) int {
	n := 2 + len(`"method":""`) + len(m.Method) + len(`,"path":""`) + len(m.Path) +
		len(`,"status":`) + 20 + len(`,"stream":""`) + len(m.Stream) + len(`,"stream_id":`) + 20 +
		len(`,"event_id":""`) + len(m.EventID) + len(`,"event_type":""`) + len(m.EventType) +
		len(`,"retry":""`) + len(m.Retry) + len(`,"ws_opcode":`) + 20 +
		2*len(`,"response_header":{}`) + len(`,"priming":[]`)
	for _, h := range [][]headerField{req, resp} {
		for _, f := range h {
			n += len(f.key) + len(`"":[],`)
			for _, v := range f.values {
				n += len(v) + len(`"",`)
			}
		}
	}
	for _, p := range m.Priming {
		n += len(p) + len(`"",`)
	}
	return n
}

// appendKey appends key, after a comma unless it is the first field of the
// object that opened at dst[start-1].
func appendKey(dst []byte, start int, key string) []byte {
	if len(dst) > start {
		dst = append(dst, ',')
	}
	return append(dst, key...)
}

// headerField is one key of an http.Header and its values.
type headerField struct {
	key    string
	values []string
}

// sortHeader appends h's fields to dst in the order encoding/json writes a
// map[string][]string: by the bytes of the unescaped key. A usual header is
// sorted by insertion as it is read, which is faster than slices.SortFunc
// on so few fields.
func sortHeader(dst []headerField, h http.Header) []headerField {
	if len(h) > 16 {
		for k, vs := range h {
			dst = append(dst, headerField{k, vs})
		}
		slices.SortFunc(dst, func(a, b headerField) int { return strings.Compare(a.key, b.key) })
		return dst
	}
	for k, vs := range h {
		dst = append(dst, headerField{})
		i := len(dst) - 1
		for ; i > 0 && dst[i-1].key > k; i-- {
			dst[i] = dst[i-1]
		}
		dst[i] = headerField{k, vs}
	}
	return dst
}

// appendHeader writes a sorted header as a JSON object, a nil value as null.
func appendHeader(dst []byte, h []headerField) []byte {
	dst = append(dst, '{')
	for i, f := range h {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, f.key), ':')
		dst = appendStrings(dst, f.values)
	}
	return append(dst, '}')
}

// appendStrings writes a []string, nil as null and empty as [].
func appendStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// plainJSON is the bytes a JSON string holds as they are: ASCII but for
// control characters, the quote, the backslash and < > &.
var plainJSON = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString is encoding/json's string encoder with HTML escaping on
// (its default): short escapes for \" \\ \b \f \n \r \t, \u00xx for other
// control bytes and for < > &, \ufffd for each byte of invalid UTF-8, and
// \u2028, \u2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if plainJSON[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
