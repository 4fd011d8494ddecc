package recorder

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// ValuePatterns find a secret by what it looks like (sk-…, ghp_…), where
// FrameRedactor and HTTPRedactor find it by the name it goes under: a key
// the user must never let reach disk may turn up in any member, header,
// URL or argument. A member whose string value a pattern matches is
// stored "[redacted]" whole, and so is a member holding an array with such
// a string in it (a command line's arguments): replay matches a redacted
// member with any value, which it could not do for one element of an
// array. It looks where FrameRedactor does (LooksInto: params, results
// and errors, not schemas).
//
// A nil *ValuePatterns matches nothing. Its methods are safe for
// concurrent use.
type ValuePatterns struct {
	res []*regexp.Regexp
}

// ErrEmptyPattern refuses an empty pattern: it matches every value, so it
// is surely a mistake (an unset variable in a script), not a wish to blank
// everything.
var ErrEmptyPattern = errors.New("an empty pattern matches every value")

// PatternError names a pattern NewValuePatterns refused, so that a
// command can name the flag it came from.
type PatternError struct {
	Pattern string
	Err     error // ErrEmptyPattern, or why it does not compile
}

func (e *PatternError) Error() string { return fmt.Sprintf("value pattern %q: %v", e.Pattern, e.Err) }
func (e *PatternError) Unwrap() error { return e.Err }

// OptionError says what is wrong with a pattern NewValuePatterns refused
// in the words of the option the user gave it to (a command's
// --redact-value, vcr.WithRedactValue), naming the pattern, so that each
// place that takes patterns complains alike. Other errors are returned as
// they are.
func OptionError(option string, err error) error {
	var pe *PatternError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %q: %w", option, pe.Pattern, pe.Err)
	}
	return err
}

// NewValuePatterns compiles Go regular expressions; it returns nil when
// there are none, and a *PatternError for the first that is empty or
// does not compile.
func NewValuePatterns(patterns []string) (*ValuePatterns, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	v := &ValuePatterns{}
	for _, p := range patterns {
		if p == "" {
			return nil, &PatternError{Pattern: p, Err: ErrEmptyPattern}
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, &PatternError{Pattern: p, Err: err}
		}
		v.res = append(v.res, re)
	}
	return v, nil
}

// Frame returns frame with the members that hold a matching value
// blanked (a new slice when n > 0; frame itself otherwise), and how many.
// A frame that is not JSON is returned as it is.
func (v *ValuePatterns) Frame(frame []byte) (out []byte, n int) {
	if v == nil {
		return frame, 0
	}
	out, n, _ = jsonrpc.ReplaceMemberValues(frame, func(path []string, _ string, value []byte) bool {
		return LooksInto(path) && v.holds(value)
	}, redactedJSON)
	return out, n
}

// Rewrite is Frame for store.WriterOptions.Rewrite: m, or a copy of it
// with the matching values blanked.
func (v *ValuePatterns) Rewrite(m *store.Message) *store.Message {
	frame, n := v.Frame(m.Frame)
	return withFrame(m, frame, n)
}

// Rewriter is store.WriterOptions.Rewrite for a recording that blanks
// the members named (FrameRedactor) and the values values match, or nil
// when there is nothing to blank, so the store does no work per message.
func Rewriter(names []string, values *ValuePatterns) func(*store.Message) *store.Message {
	frames := NewFrameRedactor(names)
	if frames == nil && values == nil {
		return nil
	}
	return func(m *store.Message) *store.Message { return values.Rewrite(frames.Rewrite(m)) }
}

// holds reports whether value is a string a pattern matches, or an array
// with such a string in it, at any depth of arrays. Objects in an array
// are not looked into here: their members are looked at as members.
func (v *ValuePatterns) holds(value []byte) bool {
	switch {
	case len(value) > 0 && value[0] == '"':
		s, ok := jsonrpc.String(value)
		return ok && v.Match(s)
	case len(value) > 0 && value[0] == '[':
		found := false
		jsonrpc.Elements(value, func(el []byte) { found = found || v.holds(el) })
		return found
	}
	return false
}

// Match says whether a pattern matches s: a string of the session's info
// (an end's error, a note) is stored "[redacted]" whole when one does,
// as a member's value is. A nil *ValuePatterns matches nothing.
func (v *ValuePatterns) Match(s string) bool {
	if v == nil {
		return false
	}
	for _, re := range v.res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// Header returns h with the values the patterns match blanked: h itself
// when none is, else a copy, as h may be the forwarded header.
func (v *ValuePatterns) Header(h http.Header) http.Header {
	for _, vals := range h {
		if slices.ContainsFunc(vals, v.Match) {
			out := h.Clone()
			for _, vals := range out {
				v.blank(vals)
			}
			return out
		}
	}
	return h
}

// blank replaces the matching values in place.
func (v *ValuePatterns) blank(vals []string) {
	if v == nil {
		return
	}
	for i, s := range vals {
		if v.Match(s) {
			vals[i] = Redacted
		}
	}
}

// escaped says whether the escaped piece of a URL (a query value, a path
// segment) unescapes to a matching value. A piece that does not unescape
// is judged as written.
func (v *ValuePatterns) escaped(piece string, unescape func(string) (string, error)) bool {
	if v == nil {
		return false
	}
	if un, err := unescape(piece); err == nil {
		piece = un
	}
	return v.Match(piece)
}

// path returns an escaped URL path with each segment that matches
// replaced: some servers take their key as a path segment
// (https://host/KEY/mcp).
func (v *ValuePatterns) path(escaped string) string {
	if v == nil {
		return escaped
	}
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		if s != "" && v.escaped(s, url.PathUnescape) {
			segs[i] = Redacted
		}
	}
	return strings.Join(segs, "/")
}
