package script

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file is the near miss: when none of a tool's or prompt's answers
// matches a request, the reply names the answer that came nearest and
// what kept it from matching, as a cassette's unmatched request names the
// nearest recorded one. A script with many answers (one per recorded set
// of arguments, from export --script) otherwise leaves its author to
// compare the arguments with each when by eye.

// maxMisses bounds the misses a reply names: the nearest answer's first
// few say enough, and the reply stays short.
const maxMisses = 3

// nearest names the answer among cands whose when misses the arguments
// and replies by the fewest points (the first of those, in script order),
// and those points: "; nearest: the answer at line 9: arguments.city is
// "Bergen", want "Oslo"". Empty when no answer has a when to miss.
func nearest[A interface{ missesOf() (Pos, *matcher) }](cands []A, args, replies map[string]any) string {
	var best []string
	line := 0
	for _, c := range cands {
		at, m := c.missesOf()
		if !m.hasWhen {
			continue
		}
		if ms := m.misses(args, replies); len(ms) > 0 && (best == nil || len(ms) < len(best)) {
			best, line = ms, at.Line
		}
	}
	if best == nil {
		return ""
	}
	more := ""
	if len(best) > maxMisses {
		more = fmt.Sprintf("; and %d more", len(best)-maxMisses)
		best = best[:maxMisses]
	}
	return fmt.Sprintf("; nearest: the answer at line %d: %s%s", line, strings.Join(best, "; "), more)
}

func (a *answer) missesOf() (Pos, *matcher)       { return a.at, &a.matcher }
func (a *promptAnswer) missesOf() (Pos, *matcher) { return a.at, &a.matcher }

// misses says what keeps the when from matching the arguments and the
// client's replies, one phrase each; none when it matches.
func (m *matcher) misses(args, replies map[string]any) []string {
	var out []string
	for _, w := range []struct {
		want map[string]any
		kind askKind
	}{{m.elicited, elicitKind}, {m.sampled, sampleKind}} {
		if w.want == nil {
			continue
		}
		got, ok := replies[w.kind.data].(map[string]any)
		if !ok {
			out = append(out, w.kind.data+" has no reply (the question was not asked, or not answered)")
			continue
		}
		out = subsetMisses(out, w.kind.data, w.want, got)
	}
	if m.hasExact {
		out = exactMisses(out, "arguments", m.exact, args)
	}
	if m.subset != nil {
		out = subsetMisses(out, "arguments", m.subset, args)
	}
	for _, r := range m.regex {
		path := "arguments." + r.arg
		v, ok := args[r.arg]
		s, isStr := v.(string)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is missing, want a string matching %s", path, r.re))
		case !isStr:
			out = append(out, fmt.Sprintf("%s is %s, want a string matching %s", path, shortJSON(v), r.re))
		case !r.re.MatchString(s):
			out = append(out, fmt.Sprintf("%s is %s, which %s does not match", path, shortJSON(v), r.re))
		}
	}
	return out
}

// exactMisses adds where got differs from want, which it must equal.
func exactMisses(out []string, path string, want, got any) []string {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if !wok || !gok {
		if !jsonEqual(want, got) {
			out = append(out, fmt.Sprintf("%s is %s, want %s", path, shortJSON(got), shortJSON(want)))
		}
		return out
	}
	for _, k := range sortedKeys(wm) {
		if g, ok := gm[k]; ok {
			out = exactMisses(out, path+"."+k, wm[k], g)
		} else {
			out = append(out, fmt.Sprintf("%s.%s is missing, want %s", path, k, shortJSON(wm[k])))
		}
	}
	for _, k := range sortedKeys(gm) {
		if _, ok := wm[k]; !ok {
			out = append(out, fmt.Sprintf("%s.%s is %s, which exact does not have", path, k, shortJSON(gm[k])))
		}
	}
	return out
}

// subsetMisses adds where got lacks what want holds; nested objects are
// compared as subsets too, as isSubset does.
func subsetMisses(out []string, path string, want, got map[string]any) []string {
	for _, k := range sortedKeys(want) {
		g, ok := got[k]
		switch wm, isMap := want[k].(map[string]any); {
		case !ok:
			out = append(out, fmt.Sprintf("%s.%s is missing, want %s", path, k, shortJSON(want[k])))
		case isMap:
			if gm, ok := g.(map[string]any); ok {
				out = subsetMisses(out, path+"."+k, wm, gm)
			} else {
				out = append(out, fmt.Sprintf("%s.%s is %s, want %s", path, k, shortJSON(g), shortJSON(want[k])))
			}
		case !jsonEqual(want[k], g):
			out = append(out, fmt.Sprintf("%s.%s is %s, want %s", path, k, shortJSON(g), shortJSON(want[k])))
		}
	}
	return out
}

// shortJSON writes v as JSON, a long value cut to its first 64 bytes and
// its length, so that a near miss on a big argument stays a line.
func shortJSON(v any) string {
	b := mustJSON(v)
	if len(b) <= 64 {
		return string(b)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut-- // not inside a character
	}
	return fmt.Sprintf("%s…(%d bytes)", b[:cut], len(b))
}
