package lint

import (
	"encoding/json"
	"strconv"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// progress checks a notifications/progress against the request whose
// token it names: a request of the other side, still unanswered and not
// cancelled, and a value above the last.
func (c *checker) progress(f *frame) {
	p := objectMembers(f.params)
	tok := p["progressToken"]
	if len(tok) == 0 || string(tok) == "null" {
		return // nothing to pair it with
	}
	r := c.tokens[other(f.dir)][idKey(string(tok))]
	if r == nil {
		c.report("progress-unknown-token", f.seq, 0, "progress for token %s, which no request of the %s carried", tok, side(other(f.dir)))
		return
	}
	switch {
	case r.answered != 0:
		c.report("progress-after-response", f.seq, r.answered, "progress for %s %s after its answer at #%d", r.method, r.id, r.answered)
	case r.cancelled != 0:
		// The receiver should stop working on a cancelled request; a
		// progress already on its way when the cancel came is a race, so
		// this is worth knowing rather than wrong.
		c.report("progress-after-cancel", f.seq, r.cancelled, "progress for %s %s after it was cancelled at #%d", r.method, r.id, r.cancelled)
	}
	v, err := strconv.ParseFloat(string(p["progress"]), 64)
	if err != nil {
		return
	}
	if r.progress != nil && v <= *r.progress {
		c.report("progress-not-increasing", f.seq, r.seq, "progress %s after %s for token %s; it must increase", p["progress"], strconv.FormatFloat(*r.progress, 'g', -1, 64), tok)
	}
	r.progress = &v
}

// cancelled checks a notifications/cancelled: it names a request its own
// sender made, and never initialize.
func (c *checker) cancelled(f *frame) {
	id := string(member(f.params, "requestId"))
	if id == "" {
		return
	}
	r := c.sent[f.dir][idKey(id)]
	switch {
	case r == nil && f.dir == store.C2S && c.connectionShare():
		// A client without an HTTP session may cancel a request it sent
		// on another connection (go-sdk sends each cancellation on a
		// connection of its own): the Cassette judges it with the other
		// sessions (Tape); alone, it cannot be.
		if c.cassette != nil {
			c.cassette.cancel(c, &pendingCancel{seq: f.seq, at: f.at, id: id, key: idKey(id)})
		}
	case r == nil:
		c.report("cancel-unknown", f.seq, 0, "cancels request %s, which the %s never sent", id, side(f.dir))
	case r.method == "initialize":
		c.report("cancel-initialize", f.seq, r.seq, "the client cancels initialize, which it must not")
	case r.answered == 0 && r.cancelled == 0:
		r.cancelled = f.seq
	}
}

// progressToken returns params._meta.progressToken as tokens are found
// by (idKey), or "" when there is none.
func progressToken(params json.RawMessage) string {
	t := member(member(params, "_meta"), "progressToken")
	if len(t) == 0 || string(t) == "null" {
		return ""
	}
	return idKey(string(t))
}

// idKey is an id's or a progress token's JSON text as lint finds requests
// by: jsonrpc.CanonicalID, the value whatever its spelling, as the
// inspector pairs them. Findings show the id as written.
func idKey(id string) string { return jsonrpc.CanonicalIDString(id) }
