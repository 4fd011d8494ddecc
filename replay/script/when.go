package script

import (
	"math"
	"regexp"
	"slices"
)

// This file is when: which answer of a tool, prompt or resource a request
// gets, by its arguments and by the client's replies to what it asked
// first.

// matcher is a compiled when; the zero matcher matches anything (the
// default answer).
type matcher struct {
	exact    any
	hasExact bool
	subset   map[string]any
	regex    []argRegex
	elicited map[string]any // when.elicited: a subset of the client's answer
	sampled  map[string]any // when.sampled: a subset of the model's answer
	hasWhen  bool
}

type argRegex struct {
	arg string
	re  *regexp.Regexp
}

// when compiles w for an answer of owner (tool, prompt or resource), which
// asks asks: when.elicited and when.sampled need the question they match.
func (c *compiler) when(w *When, owner string, asks []*ask) matcher {
	var m matcher
	m.hasWhen = true
	if w.Exact.Set && w.Subset.Set {
		c.errorf(w.Pos, "give exact or subset, not both")
	}
	if w.Exact.Set && c.kind(w.Exact, "object") {
		m.exact, m.hasExact = w.Exact.V, true
	}
	if w.Subset.Set && c.kind(w.Subset, "object") {
		m.subset = w.Subset.V.(map[string]any)
	}
	for _, k := range sortedKeys(w.Regex) {
		re, err := regexp.Compile(w.Regex[k])
		if err != nil {
			c.errorf(sub(sub(w.Pos, "regex"), k), "regex does not compile: %v", err)
			continue
		}
		m.regex = append(m.regex, argRegex{arg: k, re: re})
	}
	if w.Elicited.Set && c.kind(w.Elicited, "object") {
		m.elicited = w.Elicited.V.(map[string]any)
	}
	if w.Sampled.Set && c.kind(w.Sampled, "object") {
		m.sampled = w.Sampled.V.(map[string]any)
	}
	if !w.Exact.Set && !w.Subset.Set && len(w.Regex) == 0 && !w.Elicited.Set && !w.Sampled.Set {
		c.errorf(w.Pos, "when needs exact, subset, regex, elicited or sampled")
	}
	asked := func(k askKind) bool { return slices.ContainsFunc(asks, func(a *ask) bool { return a.kind == k }) }
	if w.Elicited.Set && !asked(elicitKind) {
		c.errorf(sub(w.Pos, "elicited"), "when.elicited matches the client's answer to the %s's elicit, and this %s has none", owner, owner)
	}
	if w.Sampled.Set && !asked(sampleKind) {
		c.errorf(sub(w.Pos, "sampled"), "when.sampled matches the model's answer to the %s's sample, and this %s has none", owner, owner)
	}
	return m
}

// matches says whether the arguments, and the client's replies to the
// questions asked first, satisfy the when; an answer without one matches
// anything (the default).
func (m *matcher) matches(args, replies map[string]any) bool {
	if !m.hasWhen {
		return true
	}
	for _, w := range []struct {
		want map[string]any
		kind askKind
	}{{m.elicited, elicitKind}, {m.sampled, sampleKind}} {
		got, _ := replies[w.kind.data].(map[string]any)
		if w.want != nil && (got == nil || !isSubset(w.want, got)) {
			return false
		}
	}
	if m.hasExact && !jsonEqual(m.exact, args) {
		return false
	}
	if m.subset != nil && !isSubset(m.subset, args) {
		return false
	}
	for _, r := range m.regex {
		s, ok := args[r.arg].(string)
		if !ok || !r.re.MatchString(s) {
			return false
		}
	}
	return true
}

// jsonEqual compares JSON values, numbers by value, exactly (the script's 1
// and a client's 1.0 are the same argument; 9007199254740993 is not
// 9007199254740992).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if ra, ok := numberRat(a); ok {
		rb, ok := numberRat(b)
		return ok && ra.Cmp(rb) == 0
	}
	return a == b
}

// isSubset says whether every key of want is in got with an equal value;
// nested objects are compared as subsets too.
func isSubset(want, got map[string]any) bool {
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		if wm, ok := v.(map[string]any); ok {
			gm, ok := g.(map[string]any)
			if !ok || !isSubset(wm, gm) {
				return false
			}
			continue
		}
		if !jsonEqual(v, g) {
			return false
		}
	}
	return true
}

// number is a script's number as a float64, for the checks that want one
// (a ttl, a kind).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case exactNum: // written finer than a float64 holds: near enough here
		return mustFloat(string(x)), true
	}
	return math.NaN(), false
}
