// Package termsafe writes text that came off the wire so that a terminal
// shows it as it is: a peer's tool name, id or malformed frame may hold
// newlines, escape sequences or invisible characters, which printed raw
// would forge extra lines (in a log, or in a shell script made from a
// recording), recolour or clear the user's terminal, or hide and reorder
// text. It never changes text that holds none of them.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every character a terminal would act on or not show
// written as an escape: \n, \r, \t, \uXXXX for other control and format
// characters (ESC, DEL, C1 controls, zero-width spaces, bidirectional
// overrides, byte order marks), \xHH for a byte that is not UTF-8. The
// \u form is JSON's, so an escaped JSON string still reads as the same
// string. s itself is returned when it needs none.
func Line(s string) string { return escape(s, false) }

// Body is Line for a message body printed as lines of its own: a tab is
// kept (it moves the cursor, nothing more), and so is a newline, which
// the caller splits on.
func Body(s string) string { return escape(s, true) }

func escape(s string, body bool) string {
	if safe(s, body) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case shown(r, body):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// safe says whether s needs no escape: the quick path for nearly every
// string (printable ASCII, or text with nothing hidden in it).
func safe(s string, body bool) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !shown(rune(c), body) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !shown(r, body) {
			return false
		}
		i += size
	}
	return true
}

// shown says whether a terminal shows r as itself: a graphic character
// (letters, marks, numbers, punctuation, symbols, spaces; not a control
// or format character, nor a line or paragraph separator) or a plain
// space; in a body, a tab or newline too.
func shown(r rune, body bool) bool {
	if r == ' ' || (body && (r == '\t' || r == '\n')) {
		return true
	}
	if r < utf8.RuneSelf {
		return r > ' ' && r < 0x7f
	}
	return unicode.IsGraphic(r)
}
