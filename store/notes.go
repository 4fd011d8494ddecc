package store

import "strings"

// The notes the HTTP recorder keeps on a client message whose POST the
// client left before the answer came (Message.Note). In 2026-07-28
// closing a response stream cancels its request, so lint reads them as a
// cancellation there; in earlier versions a disconnection is not one.
const (
	NoteLeftBeforeAnswer = "the client went away before the upstream answered"
	NoteLeftEmptyStream  = "the client went away before its event stream carried a message"
	NoteLeftStream       = "the client went away before its event stream ended"
)

// ClientLeft says whether note is one of the notes above.
func ClientLeft(note string) bool {
	return strings.HasPrefix(note, "the client went away before ")
}

// NoteNotAsked is the note mcpmock's fallback keeps on its own answer to a
// request of the server's that it did not ask its client (one no client
// message caused). The client never saw that exchange, so a replay leaves
// the request and the answer out, and lint holds nothing of the answer
// against the client; both stay in the cassette, for whoever looks at it.
// A recorder's note (an HTTP refusal's) may follow it, after "; ".
const NoteNotAsked = "mcpmock answered this itself: its client was not asked the server's request, which a replay leaves out"
