package store

import (
	"mime"
	"strings"
	"unicode/utf8"
)

// Chromium hands DevTools, and so Playwright and "Save all as HAR", the
// text of a text/event-stream answer without a charset decoded as
// windows-1252, its default for text, though SSE is UTF-8 whatever the
// header says: "–" reads "â€“". Encoding that text back to windows-1252
// gives the bytes the server sent. A text that was decoded right does
// not survive the trip: a character outside windows-1252 ("🎉", "→"),
// or one inside it alone ("é" is one byte, no UTF-8), leaves it as it
// is.

// windows1252High are the characters windows-1252 decodes bytes
// 0x80–0x9F to, with those bytes; 0x81, 0x8D, 0x8F, 0x90 and 0x9D decode
// to U+0081 … themselves.
var windows1252High = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87, 'ˆ': 0x88,
	'‰': 0x89, 'Š': 0x8A, '‹': 0x8B, 'Œ': 0x8C, 'Ž': 0x8E, '‘': 0x91, '’': 0x92, '“': 0x93,
	'”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97, '˜': 0x98, '™': 0x99, 'š': 0x9A, '›': 0x9B,
	'œ': 0x9C, 'ž': 0x9E, 'Ÿ': 0x9F,
}

// eventStreamUTF8 is the UTF-8 an event stream's text was, when the
// text is UTF-8 read as windows-1252 (the answer's Content-Type names
// no charset, or another than UTF-8); else the text as it is.
func eventStreamUTF8(text []byte, contentType string) []byte {
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if cs := strings.ToLower(params["charset"]); cs == "utf-8" || cs == "utf8" {
			return text
		}
	}
	out := make([]byte, 0, len(text))
	misread := false
	for _, r := range string(text) {
		b, high := windows1252High[r]
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
			continue
		case high:
		case r >= 0xA0 && r <= 0xFF, r == 0x81, r == 0x8D, r == 0x8F, r == 0x90, r == 0x9D:
			b = byte(r)
		default:
			return text // no windows-1252 text
		}
		out = append(out, b)
		misread = true
	}
	if !misread || !utf8.Valid(out) {
		return text
	}
	return out
}
