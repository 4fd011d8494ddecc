// Package plural spells a count with its noun as English reads it ("1
// message", "2 messages"), for every line mcpspy, mcpmock and the store
// print: a count of one must never read "1 messages". It knows the few
// plurals the nouns in those lines need, not English at large.
package plural

import (
	"fmt"
	"strings"
)

// Count spells "1 value", "2 values", "0 values"; "1 entry", "2 entries";
// "1 message is", "2 messages are" (a noun ending in " is" takes its verb
// along).
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if word, ok := strings.CutSuffix(noun, " is"); ok {
		return Count(n, word) + " are"
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && stem != "" && !strings.ContainsAny(stem[len(stem)-1:], "aeiou") {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Agree returns one when n is 1, else many: the verb or pronoun that
// follows a Count ("1 entry was", "2 entries were").
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
