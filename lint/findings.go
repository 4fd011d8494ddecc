package lint

import (
	"cmp"
	"slices"
)

// Findings returns what the checker has found so far, in seq order,
// without ending the check: more messages may be added after it, as they
// are recorded. The checks that need the whole session (a request never
// answered, a handshake that never happened, a client that skipped
// notifications/initialized) are not in it; Finish runs them.
func (k *Checker) Findings() []Finding {
	out := slices.Clone(k.c.out)
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}
