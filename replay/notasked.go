package replay

import (
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// NoteNotAsked is the note mcpmock's fallback keeps on its own answer to a
// request of the server's that it did not ask its client (one no client
// message caused). The client never saw that exchange, so a replay leaves
// the request and the answer out; both stay in the cassette, for whoever
// looks at it.
const NoteNotAsked = "mcpmock answered this itself: its client was not asked the server's request, which a replay leaves out"

// notAskedNote says whether note marks a message as NoteNotAsked does; a note
// the recorder adds on top (an HTTP refusal's body) follows it.
func notAskedNote(note string) bool { return strings.HasPrefix(note, NoteNotAsked) }

// unasked returns the ids of the server requests of msgs that the
// fallback answered without asking its client (NoteNotAsked), as the
// JSON text of the id; nil when there are none. A server does not
// reuse its ids in a session, so the id finds the request.
func unasked(msgs []*store.Message) map[string]bool {
	var ids map[string]bool
	for _, m := range msgs {
		if m.Dir != store.C2S || !notAskedNote(m.Note) {
			continue
		}
		if id := jsonrpc.Member(m.Frame, "id"); id != nil {
			if ids == nil {
				ids = map[string]bool{}
			}
			ids[string(id)] = true
		}
	}
	return ids
}
