package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/termsafe"
)

// Class is the syntax class of a piece of text in the detail pane; the
// view maps classes to colours.
type Class uint8

// Classes of text.
const (
	Plain Class = iota
	Key
	String
	Number
	Literal // true, false, null
	Punct
	Folded // a placeholder for folded text
	Heading
	Label
	Bad
	Warn // a lint warning
)

// Span is text of one class.
type Span struct {
	Class Class
	Text  string
}

// Line is one line of the detail pane.
type Line []Span

// Folding: a string longer than foldLen, or base64 of at least
// base64Len characters, shows only its start and its size until unfolded.
const (
	foldLen   = 160
	foldKeep  = 60
	base64Len = 64
)

// Pretty renders a frame as indented JSON lines with syntax classes.
// Unless unfold is set, long strings and base64 blobs are folded. A frame
// that is not JSON is shown as it is, line by line.
func Pretty(frame []byte, unfold bool) []Line {
	p := &printer{unfold: unfold}
	if err := p.print(frame); err != nil {
		out := []Line{{{Bad, "not valid JSON: " + err.Error()}}}
		// Malformed: anything may be in it, shown escaped (termsafe).
		// Long lines fold as long strings do: a frame cut off by a peer's
		// line limit is one line of megabytes, which took the pane
		// (and every move onto the row) seconds to wrap.
		for _, l := range strings.Split(string(frame), "\n") {
			out = append(out, rawLine(l, unfold))
		}
		return out
	}
	return p.lines
}

type printer struct {
	unfold bool
	lines  []Line
	stack  []container
}

type container struct {
	obj bool
	n   int // elements so far
}

func (p *printer) newLine(depth int, s ...Span) {
	l := Line{{Plain, strings.Repeat("  ", depth)}}
	p.lines = append(p.lines, append(l, s...))
}

func (p *printer) add(s ...Span) {
	if len(p.lines) == 0 {
		p.lines = append(p.lines, nil)
	}
	last := &p.lines[len(p.lines)-1]
	*last = append(*last, s...)
}

func (p *printer) print(frame []byte) error {
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	afterKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				if len(p.stack) == 0 && len(p.lines) > 0 {
					return nil
				}
				return io.ErrUnexpectedEOF
			}
			return err
		}
		depth := len(p.stack)
		var top *container
		if depth > 0 {
			top = &p.stack[depth-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			p.stack = p.stack[:depth-1]
			if top.n == 0 {
				p.add(Span{Punct, string(d)})
			} else {
				p.newLine(depth-1, Span{Punct, string(d)})
			}
			if len(p.stack) == 0 {
				return p.end(dec)
			}
			continue
		}
		// A key, or a value.
		isKey := top != nil && top.obj && !afterKey
		if top != nil && !afterKey {
			if top.n > 0 {
				p.add(Span{Punct, ","})
			}
			top.n++
		}
		var val []Span
		switch v := tok.(type) {
		case json.Delim:
			val = []Span{{Punct, string(v)}}
		case string:
			if isKey {
				p.newLine(depth, Span{Key, jsonString(v)}, Span{Punct, ": "})
				afterKey = true
				continue
			}
			val = p.str(v)
		case json.Number:
			val = []Span{{Number, string(v)}}
		case bool:
			val = []Span{{Literal, fmt.Sprint(v)}}
		case nil:
			val = []Span{{Literal, "null"}}
		}
		if afterKey || depth == 0 && len(p.lines) == 0 {
			p.add(val...)
		} else {
			p.newLine(depth, val...)
		}
		afterKey = false
		if d, ok := tok.(json.Delim); ok {
			p.stack = append(p.stack, container{obj: d == '{'})
		} else if len(p.stack) == 0 {
			return p.end(dec)
		}
	}
}

// end checks that nothing but space follows the value.
func (p *printer) end(dec *json.Decoder) error {
	if _, err := dec.Token(); err == nil {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// str renders a string value, folded when long or base64.
func (p *printer) str(s string) []Span {
	text := jsonString(s)
	if p.unfold {
		return []Span{{String, text}}
	}
	n := utf8.RuneCountInString(s)
	if n >= base64Len && isBase64(s) {
		return []Span{{String, quotePrefix(s, 24)}, {Folded, fmt.Sprintf(" ‹base64, %s; z unfolds›", sizeText(len(s)*3/4))}}
	}
	if len(text) > foldLen {
		return []Span{{String, quotePrefix(s, foldKeep)}, {Folded, fmt.Sprintf(" ‹%d more chars; z unfolds›", n-foldKeep)}}
	}
	return []Span{{String, text}}
}

// rawLine is one line of a frame that is not JSON, folded past foldLen
// bytes unless unfold is set.
func rawLine(l string, unfold bool) Line {
	if unfold || len(l) <= foldLen {
		return Line{{Plain, termsafe.Line(l)}}
	}
	keep := foldKeep
	for keep > 0 && !utf8.RuneStart(l[keep]) {
		keep-- // cut before a character, not inside one
	}
	return Line{{Plain, termsafe.Line(l[:keep]) + "…"}, {Folded, fmt.Sprintf(" ‹%s more; z unfolds›", sizeText(len(l)-keep))}}
}

func quotePrefix(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			s = s[:k]
			break
		}
		i++
	}
	return strings.TrimSuffix(jsonString(s), `"`) + `…"`
}

// jsonString writes s as a JSON string for the pane: <, > and & as they
// are (json.Marshal writes \u003c for HTML's sake, which a reader of
// "x < y" has no use for), and what a terminal would hide or act on
// escaped (termsafe), so the text shown is what was sent, all of it.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return termsafe.Line(strings.TrimSuffix(b.String(), "\n"))
}

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	// Long words of letters only are text, not base64: demand a digit or
	// mixed case somewhere, as encoded bytes nearly always have.
	return strings.ContainsAny(s, "0123456789+/") || strings.ToLower(s) != s && strings.ToUpper(s) != s
}

// sizeText says a byte count for people.
func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
