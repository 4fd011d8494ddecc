package replay

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// The leaves of a canonical value: what the nearest recorded request is
// chosen by, and what the diff of an unmatched request (or of two answers,
// in a comparison of sessions) shows. A leaf's value is a slice of the
// canonical bytes, never a copy, and a diff line shows a long value by its
// start and its length: a 64 MiB upload nothing matched is compared where
// it lies, and its error, its log line and the report stay short.

// leaf is one leaf of a canonical value, written path=value
// (params.arguments.city="Oslo"). A leaf without a path is its value
// alone: "(no answer)", or a value that is not valid JSON.
type leaf struct {
	path  string
	value []byte // canonical JSON text
}

// leafCap bounds the leaves of one value (see walkLeaves).
const leafCap = 4096

var (
	emptyObject = []byte("{}")
	emptyArray  = []byte("[]")
)

// flatten lists the leaves of canonical params, sorted, for distances and
// diffs.
func flatten(canon []byte) []leaf { return flattenAt("params", canon) }

// flattenAt is flatten for a value named root ("result", "error").
func flattenAt(root string, canon []byte) []leaf {
	if len(canon) == 0 {
		return nil
	}
	if end, ok := jsonrpc.SkipValue(canon, 0); !ok || jsonrpc.SkipWS(canon, end) != len(canon) {
		return []leaf{{value: canon}}
	}
	var out []leaf
	walkLeaves(canon, 0, root, &out)
	slices.SortFunc(out, compareLeaves)
	return out
}

// walkLeaves appends the leaves of the valid JSON value at b[i:] (white
// space before it allowed), named path, to out, and returns the index
// just past it. Of members with one name, the last counts, as when
// decoding; canonical params have them next to each other.
//
// Past leafCap leaves, what is left of each array or object still open is
// one leaf: its members from name on, path.{name…}, or its elements from
// k on, path[k:], valued by their bytes as they lie. A request of
// millions of short values then costs a few thousand leaves and paths,
// not one of each per value, and two values that differ in their first
// leafCap leaves still differ there: both stop at the same place.
func walkLeaves(b []byte, i int, path string, out *[]leaf) int {
	i = jsonrpc.SkipWS(b, i)
	switch b[i] {
	case '{':
		i = jsonrpc.SkipWS(b, i+1)
		if b[i] == '}' {
			*out = append(*out, leaf{path: path, value: emptyObject})
			return i + 1
		}
		prev, prevStart := "", 0
		for first := true; ; first = false {
			ke, _, _ := jsonrpc.SkipString(b, i)
			name := keyString(b[i:ke])
			if !first && len(*out) >= leafCap {
				return restLeaf(b, i, path+".{"+name+"…}", out)
			}
			if !first && name == prev {
				*out = (*out)[:prevStart] // a repeated member: the last counts
			} else {
				prev, prevStart = name, len(*out)
			}
			i = walkLeaves(b, jsonrpc.SkipWS(b, ke)+1, path+"."+name, out) // past the ':'
			if i = jsonrpc.SkipWS(b, i); b[i] == '}' {
				return i + 1
			}
			i = jsonrpc.SkipWS(b, i+1) // past the ','
		}
	case '[':
		i = jsonrpc.SkipWS(b, i+1)
		if b[i] == ']' {
			*out = append(*out, leaf{path: path, value: emptyArray})
			return i + 1
		}
		for k := 0; ; k++ {
			if k > 0 && len(*out) >= leafCap {
				return restLeaf(b, i, path+"["+strconv.Itoa(k)+":]", out)
			}
			i = walkLeaves(b, i, path+"["+strconv.Itoa(k)+"]", out)
			if i = jsonrpc.SkipWS(b, i); b[i] == ']' {
				return i + 1
			}
			i++ // past the ','
		}
	}
	end, _ := jsonrpc.SkipValue(b, i)
	*out = append(*out, leaf{path: path, value: b[i:end]})
	return end
}

// restLeaf appends the rest of an array or object, from its member or
// element at b[i:] to its closing bracket, as one leaf named path, and
// returns the index just past that bracket. It reads only that rest:
// every open array or object's rest lies past the one inside it, so a
// deep value is still read once.
func restLeaf(b []byte, i int, path string, out *[]leaf) int {
	j := i
	for {
		switch j = jsonrpc.SkipWS(b, j); b[j] {
		case '}', ']':
			rest := bytes.TrimRight(b[i:j], " \t\n\r")
			*out = append(*out, leaf{path: path, value: rest})
			return j + 1
		case ',', ':':
			j++
		default: // a name or a value
			j, _ = jsonrpc.SkipValue(b, j)
		}
	}
}

// compareLeaves orders leaves as their text (path=value) sorts, without
// writing it.
func compareLeaves(a, b leaf) int {
	if a.path == b.path {
		return bytes.Compare(a.value, b.value)
	}
	n := min(len(a.path), len(b.path))
	if c := strings.Compare(a.path[:n], b.path[:n]); c != 0 {
		return c
	}
	// One path starts the other: what follows it decides.
	for k := n; ; k++ {
		x, xok := a.byteAt(k)
		y, yok := b.byteAt(k)
		switch {
		case !xok || !yok:
			return cmp.Compare(btoi(xok), btoi(yok))
		case x != y:
			return cmp.Compare(x, y)
		}
	}
}

// byteAt is the k-th byte of the leaf's text; ok is false past its end.
func (l leaf) byteAt(k int) (c byte, ok bool) {
	if k < len(l.path) {
		return l.path[k], true
	}
	if k -= len(l.path); l.path != "" {
		if k == 0 {
			return '=', true
		}
		k--
	}
	if k < len(l.value) {
		return l.value[k], true
	}
	return 0, false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// leafDiff compares two flattened values: the leaves only in want (the
// recording, "-") and only in got (the live request, "+").
func leafDiff(want, got []leaf) (minus, plus []leaf) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		c := 0
		switch {
		case j == len(got):
			c = -1
		case i == len(want):
			c = 1
		default:
			c = compareLeaves(want[i], got[j])
		}
		switch {
		case c < 0:
			minus = append(minus, want[i])
			i++
		case c > 0:
			plus = append(plus, got[j])
			j++
		default:
			i++
			j++
		}
	}
	return minus, plus
}

// formatDiff shows at most a few differing leaves: "-" recorded, "+" live.
// A value too long to show whole is shown by its start and its length
// and, when the other side has another value at its path, by where the
// two first differ. A leaf with no path (a whole value, or a comparison's
// "(no answer)") comes first, whichever side it is on: it says what the
// other side's leaves differ from, and shown after them it was cut off,
// so that a request one run never answered read as answered differently.
func formatDiff(minus, plus []leaf) string {
	const max = 6
	var lines []string
	for _, whole := range []bool{true, false} {
		for _, side := range []struct {
			sign        string
			leaves, and []leaf
		}{{"- ", minus, plus}, {"+ ", plus, minus}} {
			for _, l := range side.leaves {
				if len(lines) == max {
					break
				}
				if (l.path == "") == whole {
					lines = append(lines, side.sign+shownLeaf(l, side.and))
				}
			}
		}
	}
	if n := len(minus) + len(plus); n > max {
		lines = append(lines, fmt.Sprintf("… %d more", n-max))
	}
	return strings.Join(lines, "\n")
}

// Long values in a diff line: one longer than leafShown bytes shows its
// first leafHead bytes, "…" and its length; where it first differs from
// the value the other side has at its path, past that start, it shows
// leafAround bytes either side of that place too.
const (
	leafShown  = 256
	leafHead   = 64
	leafAround = 24
)

// shownLeaf is l as a diff line shows it; others are the leaves of the
// other side, where the value l replaces (or is replaced by) may be.
func shownLeaf(l leaf, others []leaf) string {
	if l.path == "" {
		return shownValue(l.value, nil)
	}
	var other []byte
	if len(l.value) > leafShown {
		if i := slices.IndexFunc(others, func(o leaf) bool { return o.path == l.path }); i >= 0 {
			other = others[i].value
		}
	}
	return shownValue([]byte(l.path), nil) + "=" + shownValue(l.value, other)
}

// shownValue is v whole when short, else its start, "…" and its length,
// and, when v stands against another value (other, not nil) from which
// it first differs past that start, the bytes around that place.
func shownValue(v, other []byte) string {
	if len(v) <= leafShown {
		return string(v)
	}
	head := string(v[:runeStart(v, leafHead)])
	at := firstDifference(v, other)
	if at < len(head) { // the start shows where they differ
		return fmt.Sprintf("%s…(%d bytes)", head, len(v))
	}
	lo, hi := runeStart(v, at-leafAround), runeStart(v, at+leafAround)
	shown := head + "…" + string(v[lo:hi])
	if lo <= len(head) { // the place is just past the start: one piece
		shown = string(v[:hi])
	}
	return fmt.Sprintf("%s…(%d bytes; first difference at byte %d)", shown, len(v), at)
}

// firstDifference is the index of the first byte where a and b differ, or
// the length of the shorter when it starts the other.
func firstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	// Compare in blocks, which bytes.Equal does at memory speed, then
	// within the first block that differs.
	const block = 4 << 10
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// runeStart is the start of the UTF-8 sequence at v[n], so that a cut at
// it splits no character (n itself when it is past v's end or not within
// a valid sequence).
func runeStart(v []byte, n int) int {
	if n >= len(v) {
		return len(v)
	}
	if n < 0 {
		return 0
	}
	for k := n; k > 0 && k > n-utf8.UTFMax; k-- {
		if utf8.RuneStart(v[k]) {
			return k
		}
	}
	return n
}
