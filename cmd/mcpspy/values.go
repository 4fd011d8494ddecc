package main

import (
	"net/http"
	"regexp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// secretValues is export --redact-value: regular expressions that find a
// secret by what it looks like (sk-…, ghp_…) where --redact finds it by
// its member's name. A member whose string value one of them matches is
// written "[redacted]", and so is a member holding an array with such a
// string in it (a command line's arguments): replay matches a redacted
// member with any value, which it could not do for one element of an
// array. It looks where --redact does (recorder.LooksInto: params,
// results and errors, not schemas), and at HTTP header values.
type secretValues []*regexp.Regexp

func compileSecretValues(cmd string, patterns []string) (secretValues, error) {
	var out secretValues
	for _, p := range patterns {
		if p == "" {
			return nil, usageErrorf("%s: --redact-value wants a regular expression, got an empty one (it would match every value)", cmd)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, usageErrorf("%s: --redact-value %q: %v", cmd, p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

var redactedValue = []byte(`"` + store.Redacted + `"`)

// frame returns frame with the matching members blanked, and how many.
func (v secretValues) frame(frame []byte) ([]byte, int) {
	out, n, _ := jsonrpc.ReplaceMemberValues(frame, func(path []string, _ string, value []byte) bool {
		return recorder.LooksInto(path) && v.holds(value)
	}, redactedValue)
	return out, n
}

// holds reports whether value is a string one pattern matches, or an
// array with such a string in it, at any depth of arrays. Objects in an
// array are not looked into here: their members are looked at as members.
func (v secretValues) holds(value []byte) bool {
	switch {
	case len(value) > 0 && value[0] == '"':
		s, ok := jsonrpc.String(value)
		return ok && v.match(s)
	case len(value) > 0 && value[0] == '[':
		found := false
		jsonrpc.Elements(value, func(el []byte) { found = found || v.holds(el) })
		return found
	}
	return false
}

func (v secretValues) match(s string) bool {
	for _, re := range v {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// header returns h with the values the patterns match blanked; h itself
// when none is.
func (v secretValues) header(h http.Header) http.Header {
	if len(v) == 0 {
		return h
	}
	var out http.Header
	for name, vals := range h {
		for i, val := range vals {
			if !v.match(val) {
				continue
			}
			if out == nil {
				out = h.Clone()
			}
			out[name][i] = store.Redacted
		}
	}
	if out == nil {
		return h
	}
	return out
}
