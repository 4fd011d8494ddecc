// Package shellword writes words of a POSIX shell command line that the
// user copies and runs: quoted so that the shell reads each back as it
// was, and left bare where nothing in them would be read otherwise, so
// that a plain command stays legible. It never runs anything.
package shellword

import "strings"

// Quote returns s in single quotes, each quote in it written '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Word returns w as it is when the shell would read nothing into it
// (letters, digits and -_./:=@%+,), else quoted.
func Word(w string) string {
	if w == "" {
		return "''"
	}
	for _, c := range w {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-_./:=@%+,", c)) {
			return Quote(w)
		}
	}
	return w
}
