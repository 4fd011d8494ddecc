package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/suggest"
)

// listedSessions bounds how many sessions NoSession names.
const listedSessions = 5

// NoSession is the error for a session id or name that no session in all
// (those of the file at path) answers to. It wraps ErrNoSession, says what
// the file does hold (the first few ids, with their names), and which
// name was probably meant when it is close to one (not which id: s9 is as
// near s1 as s8, and the list shows them):
//
//	a.db: no such session "everything-htp" (it holds s1 "everything-http"); did you mean everything-http?
func NoSession(path, name string, all []SessionInfo) error {
	var known []string
	for _, s := range all {
		if s.Name != "" {
			known = append(known, s.Name)
		}
	}
	return fmt.Errorf("%s: %w %q (%s)%s", path, ErrNoSession, name, holds(all), suggest.DidYouMean(name, known, "%s"))
}

// Held says which sessions all are, briefly, as NoSession does: the
// first few ids, each with its name (`it holds 2 sessions: s1 "a", s2`),
// for an error that asks for one of them.
func Held(all []SessionInfo) string { return holds(all) }

// holds says which sessions all are, briefly.
func holds(all []SessionInfo) string {
	if len(all) == 0 {
		return "it holds none"
	}
	var b strings.Builder
	b.WriteString("it holds ")
	if len(all) > 1 {
		b.WriteString(strconv.Itoa(len(all)) + " sessions: ")
	}
	for i, s := range all[:min(len(all), listedSessions)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.ID)
		if s.Name != "" {
			b.WriteString(" " + strconv.Quote(s.Name))
		}
	}
	if more := len(all) - listedSessions; more > 0 {
		b.WriteString(", and " + strconv.Itoa(more) + " more")
	}
	return b.String()
}
