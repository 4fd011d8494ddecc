package lint

import (
	"strings"

	"github.com/mcptape/mcptape/store"
)

// mcpmock's fallback forwards to a real server what a cassette cannot
// answer, and records that session. A request the server makes that no
// message of the client's caused (server-everything asks for roots 350 ms
// after initialized) is not passed to the client: mcpmock answers it
// itself with a -32603 error, and notes that answer so. The pair is in
// the recording as the server sent it and as mcpmock answered, so the
// request is answered, and what the server did is judged as ever; but the
// answer is mcpmock's, not the client's, and nothing of it is held
// against the client.

// notAsked says whether m is mcpmock's own answer to a server request its
// client was not asked, and returns the rest of its note: the recorder's,
// if any.
func notAsked(m *store.Message) (rest string, ok bool) {
	if m.Dir != store.C2S {
		return "", false
	}
	rest, ok = strings.CutPrefix(m.Note, store.NoteNotAsked)
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, "; "), true
}
