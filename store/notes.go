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
