package replay

import (
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// NoteNotAsked is store.NoteNotAsked, which mcpmock's fallback keeps on
// its own answer to a server request it did not ask its client.
const NoteNotAsked = store.NoteNotAsked

// notAskedNote says whether note marks a message as NoteNotAsked does; a note
// the recorder adds on top (an HTTP refusal's body) follows it.
func notAskedNote(note string) bool { return strings.HasPrefix(note, NoteNotAsked) }

// unasked returns the indexes in msgs of the server requests that the
// fallback answered without asking its client (NoteNotAsked) and of those
// answers; nil when there are none. A noted answer pairs with the latest
// server request of its id still unanswered before it, so a server that
// uses an id again after it was answered loses only the exchange refused.
func unasked(msgs []*store.Message) map[int]bool {
	// Most sessions hold no such answer: they cost a look at each note,
	// not a parse of each frame.
	if !slices.ContainsFunc(msgs, func(m *store.Message) bool { return m.Dir == store.C2S && notAskedNote(m.Note) }) {
		return nil
	}
	var skip map[int]bool
	var pending map[string]int // server request ids (canonical) awaiting an answer
	for i, m := range msgs {
		raw := jsonrpc.Member(m.Frame, "id")
		if raw == nil {
			continue
		}
		// Compared by value: a client may write the id of the request it
		// answers otherwise than the server did (1 for 1.0).
		id := jsonrpc.CanonicalID(raw)
		hasMethod := jsonrpc.Member(m.Frame, "method") != nil
		switch {
		case m.Dir == store.S2C && hasMethod:
			if pending == nil {
				pending = map[string]int{}
			}
			pending[string(id)] = i
		case m.Dir == store.C2S && !hasMethod:
			req, ok := pending[string(id)]
			delete(pending, string(id))
			if !notAskedNote(m.Note) {
				continue
			}
			if skip == nil {
				skip = map[int]bool{}
			}
			skip[i] = true
			if ok {
				skip[req] = true
			}
		}
	}
	return skip
}
