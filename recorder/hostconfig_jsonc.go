package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// VS Code's and Cursor's mcp.json are JSONC: JSON with // and /* */
// comments and trailing commas. wrap edits a few values in such a file
// and must give back everything else byte for byte, so it does not decode
// and encode the file: it blanks the comments and trailing commas out of
// a copy (stripJSONC), which leaves JSON at the same offsets, finds the
// members there with their offsets (objectFields), and splices its edits
// into the original bytes.

// ConfigSyntaxError is a JSONC error encoding/json cannot see, such as a
// comment never closed, at a 1-based line and byte column.
type ConfigSyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *ConfigSyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

func syntaxErrorAt(b []byte, offset int, msg string) *ConfigSyntaxError {
	before := b[:offset]
	return &ConfigSyntaxError{
		Line: bytes.Count(before, []byte("\n")) + 1,
		Col:  offset - (bytes.LastIndexByte(before, '\n') + 1) + 1,
		Msg:  msg,
	}
}

// stripJSONC returns a copy of b with each comment and trailing comma
// made blank (spaces, newlines kept), so that the copy is JSON if b is
// JSONC, and every offset, line and column in it is b's too: an error
// encoding/json finds in the copy points into the user's file. Only an
// unclosed /* comment is an error here; anything else wrong is left for
// encoding/json to name.
func stripJSONC(b []byte) ([]byte, error) {
	out := bytes.Clone(b)
	trailing := -1 // a comma that is trailing if a } or ] comes next
	var prev byte  // the last byte of JSON seen, outside strings and comments
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			i = endOfString(b, i)
			prev, trailing = '"', -1
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			end := len(b)
			if nl := bytes.IndexByte(b[i:], '\n'); nl >= 0 {
				end = i + nl
			}
			blank(out[i:end])
			i = end
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			closing := bytes.Index(b[i+2:], []byte("*/"))
			if closing < 0 {
				return nil, syntaxErrorAt(b, i, "a /* comment is never closed")
			}
			end := i + 2 + closing + 2
			blank(out[i:end])
			i = end
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		default:
			if (c == '}' || c == ']') && trailing >= 0 {
				out[trailing] = ' '
			}
			trailing = -1
			// A comma after a value may trail; one after "{", "[", ":"
			// or another comma is an error, left for encoding/json.
			if c == ',' && prev != 0 && prev != '{' && prev != '[' && prev != ':' && prev != ',' {
				trailing = i
			}
			prev = c
			i++
		}
	}
	return out, nil
}

func blank(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}

// endOfString is the offset after the string that starts at b[i], a
// quote. A string cut by a line end or the end of b ends there: it is no
// JSON, and encoding/json says so at that place.
func endOfString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		switch b[j] {
		case '\\':
			j += 2
		case '"':
			return j + 1
		case '\n':
			return j
		default:
			j++
		}
	}
	return len(b)
}

// span is a part of the configuration, by offsets: [start, end).
type span struct{ start, end int }

// field is one member of an object, where its name and value are.
type field struct {
	name       string
	key, value span
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// endOfValue is the offset after the JSON value that starts at b[i]; b is
// valid JSON (a stripJSONC copy that encoding/json accepted).
func endOfValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j = endOfString(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	return j
}

// objectFields returns the members of the object at v in b (valid JSON),
// in order; ok is false when v is no object.
func objectFields(b []byte, v span) (fs []field, ok bool) {
	if b[v.start] != '{' {
		return nil, false
	}
	eachItem(b, v, func(i int) int {
		key := span{i, endOfString(b, i)}
		var name string
		_ = json.Unmarshal(b[key.start:key.end], &name) // valid JSON: a string
		i = skipSpace(b, skipSpace(b, key.end)+1)       // past the colon
		value := span{i, endOfValue(b, i)}
		fs = append(fs, field{name, key, value})
		return value.end
	})
	return fs, true
}

// arrayElements returns where each element of the array at v in b (valid
// JSON) is; ok is false when v is no array.
func arrayElements(b []byte, v span) (es []span, ok bool) {
	if b[v.start] != '[' {
		return nil, false
	}
	eachItem(b, v, func(i int) int {
		es = append(es, span{i, endOfValue(b, i)})
		return es[len(es)-1].end
	})
	return es, true
}

// eachItem calls each with the offset of every member of the object, or
// element of the array, at v in b (valid JSON); each returns the offset
// after it.
func eachItem(b []byte, v span, each func(at int) (end int)) {
	for i := v.start + 1; ; {
		i = skipSpace(b, i)
		switch b[i] {
		case '}', ']':
			return
		case ',':
			i++
		default:
			i = each(i)
		}
	}
}

// edit replaces the bytes at where with text; an empty span inserts.
type edit struct {
	where span
	text  string
}

// splice applies edits, which do not overlap, to b.
func splice(b []byte, edits []edit) []byte {
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		out.Write(b[at:e.where.start])
		out.WriteString(e.text)
		at = e.where.end
	}
	out.Write(b[at:])
	return out.Bytes()
}

// newLine is the line break and blanks that start the line where b[i]
// is, when only blanks come before b[i] on it (ok), so that something new
// can go on a line of its own, laid out as b[i]'s: a CRLF file gets a
// CRLF.
func newLine(b []byte, i int) (brk string, ok bool) {
	nl := bytes.LastIndexByte(b[:i], '\n')
	if nl < 0 || len(bytes.Trim(b[nl+1:i], " \t")) > 0 {
		return "", false
	}
	if nl > 0 && b[nl-1] == '\r' {
		nl--
	}
	return string(b[nl:i]), true
}
