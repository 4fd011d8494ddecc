// Package suggest finds the name a user probably meant when they typed
// one that is not known (a flag, a command, a field, a filter key), so
// that an error can say "did you mean …?".
//
// It only proposes: callers still refuse the unknown name. It never
// proposes a name that is far from what was typed, since a wrong guess
// misleads more than none.
package suggest

import (
	"fmt"
	"strings"
)

// Nearest returns the name in known closest to typed, or "" when none is
// close: the same letters in another case, or at most one edit away for
// a name of three to five characters, two for a longer one (an edit
// inserts, deletes or changes a character, or swaps two neighbours). A
// name of one or two characters is close only in another case: one edit
// turns it into most others. Ties go to the earlier name in known.
func Nearest(typed string, known []string) string {
	limit := 0
	switch n := len([]rune(typed)); {
	case n == 0:
		return ""
	case n > 5:
		limit = 2
	case n > 2:
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if k == typed {
			return ""
		}
		d := distance(strings.ToLower(typed), strings.ToLower(k))
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// DidYouMean is Nearest as the end of an error message: "; did you mean
// NAME?", with NAME formatted by format (e.g. "--%s" for a flag, "%q" for
// a field), or "" when no name is close.
func DidYouMean(typed string, known []string, format string) string {
	n := Nearest(typed, known)
	if n == "" {
		return ""
	}
	return "; did you mean " + fmt.Sprintf(format, n) + "?"
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent characters,
// counted in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows suffice: the swap looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
