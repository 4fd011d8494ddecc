// Package recorder holds the recording proxies: stdio (a child process),
// HTTP (Streamable HTTP and legacy HTTP+SSE) and WebSocket.
//
// A proxy forwards the bytes it reads, unchanged and at once; recording is a
// tap beside the forwarding path, never in it. Each frame is handed to a Tap
// when it is read and before it is forwarded, so that seq follows causal
// order. The frame slice is not copied for the store: the proxy reads it
// into a fresh buffer, forwards it and gives that same buffer to the Tap.
//
// It also holds the recording clients, for the parts of mcptape that talk
// to a real server themselves (mcpspy rerun, mcpmock's fallback): Child
// (stdio), StreamableClient (which tells a legacy server by its answers),
// LegacyClient and WSClient. They tap what they send and receive as the
// proxies would record it, so their sessions read like any recording.
package recorder

import (
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/frame"
	"github.com/mcptape/mcptape/store"
)

// Tap receives every frame a proxy reads. *store.Session is the Tap used in
// production. Append must be cheap and safe for concurrent use; it owns
// frame afterwards.
type Tap interface {
	Append(dir store.Dir, t time.Time, frame []byte, meta *store.HTTPMeta) uint64
}

// Amender is a Tap that can record on a frame it was given what was
// learnt after the frame went on (as store.Session.AmendMeta does, which
// makes *store.Session one): the status and headers of an HTTP answer
// that carried no message, and a note. seq is what Append returned for
// the frame (a Tap that holds frames back returns a number of its own,
// to find the frame by). It takes no frame: a long one need not live on
// until the store's next commit for its status, nor be stored again. The
// recording clients use it when their Tap has it.
type Amender interface {
	AmendMeta(seq uint64, meta *store.HTTPMeta, note string)
}

// waitBacklog is what a network proxy does before it reads on into a long
// frame (frame.LongLine and more), as the stdio pump does: it waits until
// what the cassette's writer was given before is stored (s, any session
// of that writer's, for WaitBacklog waits for the whole writer; nil: none
// yet), so that a run of long frames is held one at a time, not one per
// frame behind a slower store. Then it collects what the last long frame
// left (its copy in the store's commit), before the collector's goal, set
// while that was live, lets the heap hold it beside the next.
func waitBacklog(s *store.Session) {
	if s != nil {
		s.WaitBacklog()
	}
	runtime.GC()
}

// waitTap is waitBacklog for a recording client, whose Tap may be a
// *store.Session or wrap one: it waits for the Tap's backlog if the Tap
// can (backlogWaiter), then collects.
func waitTap(tap Tap) {
	if b, ok := tap.(backlogWaiter); ok {
		b.WaitBacklog()
	}
	runtime.GC()
}

// waitToSend is what a recording client does before it taps a long frame
// it sends (frame.LongLine and more), as before it reads on into one it
// receives: it waits for the Tap's backlog and collects, so that a run of
// long requests is held by the store one at a time, not one for each that
// came while it wrote.
func waitToSend(tap Tap, f []byte) {
	if len(f) >= frame.LongLine {
		waitTap(tap)
	}
}

// tapAnswered records on a client message tapped as seq, with meta, the
// status and headers of an answer that carried no message, and note, if
// the Tap can amend what it was given (Amender).
func tapAnswered(tap Tap, seq uint64, meta store.HTTPMeta, status int, header http.Header, note string) {
	a, ok := tap.(Amender)
	if !ok {
		return
	}
	meta.Status, meta.ResponseHeader = status, header
	a.AmendMeta(seq, &meta, note)
}

// tapRefusalBody keeps the body of a POST's refusal, if it had one, as a
// server frame with meta, as the HTTP recorder keeps it.
func tapRefusalBody(tap Tap, body []byte, meta store.HTTPMeta) {
	if len(body) > 0 {
		tap.Append(store.S2C, time.Now(), body, &meta)
	}
}

// refusalNote is the note kept on a client message whose POST was
// refused with body, which carried no message.
func refusalNote(body []byte) string {
	b := store.OneLine(string(body))
	if b == "" {
		return ""
	}
	const max = 200
	if len(b) > max {
		b = b[:max] + "…"
	}
	return "refused without a message: " + strings.ToValidUTF8(b, "\uFFFD")
}
