package inspector

import (
	"fmt"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Pairing compares ids by what they mean (jsonrpc.CanonicalID), not by
// how a peer wrote them: "\u0031" is the string "1", and 1.0 and 1e0 are
// the integer 1, so a response that writes its id another way still
// answers its request. A string and a number stay apart ("1" is not 1),
// as JSON-RPC has them. Only pairing sees these forms; every column,
// filter and export shows the id's bytes as written.

// Cancels. A notifications/cancelled names, by params.requestId, a
// request its own sender made in the same session; the receiver should
// not answer it, but an answer may already be on its way. The model links
// the two as it pairs a request with its answer, so that each says the
// other: the request that it was cancelled and whether its answer came
// anyway, the cancel which request it is about.

const cancelMethod = "notifications/cancelled"

// addReadsFrame says whether Model.add needs the frame of a message of
// this kind and method: a batch's, to take it apart, and a cancel's, for
// its requestId. Summaries carry neither; both are rare.
func addReadsFrame(kind jsonrpc.Kind, method []byte) bool {
	return kind == jsonrpc.Batch || kind == jsonrpc.Notification && string(method) == cancelMethod
}

// CancelLink ties a request to the notifications/cancelled that names
// it, seen from either: Index and Seq are the other message's (a batch's
// row when it is in one; the same session). After is the time from the
// request to the cancel; Answer is the seq of the request's answer, 0
// when none came.
type CancelLink struct {
	Index  int
	Seq    uint64
	After  time.Duration
	Answer uint64
}

// mark is what a message's method column adds for its link:
// " [cancelled]" on a request, " [cancels #4]" on a cancel.
func (l *CancelLink) mark(kind jsonrpc.Kind) string {
	switch {
	case l == nil:
		return ""
	case kind == jsonrpc.Request:
		return " [cancelled]"
	}
	return fmt.Sprintf(" [cancels #%d]", l.Seq)
}

// linkCancel links c, a notification whose frame (the message's own,
// not a batch's) is frame, at row at (its batch's, when it is in one),
// with the request it cancels, if c is a cancel and names one.
func (m *Model) linkCancel(c *row, at int32, frame []byte) {
	if m.strs[c.method] != cancelMethod {
		return
	}
	id := jsonrpc.Member(frame, "params", "requestId")
	if len(id) == 0 || string(id) == "null" {
		return
	}
	q, req := m.cancelled(c.sess, c.dir, jsonrpc.CanonicalID(id), at)
	if req == nil {
		return // lint's cancel-unknown says so
	}
	c.cancel = q
	if req.cancel < 0 { // a second cancel names it too, but is not named
		req.cancel = at
	}
}

// cancelled finds the request with id (jsonrpc.CanonicalID's form) that side dir of
// session sess sent before the cancel at row at: the one waiting for its
// answer, else the latest (its answer crossed the cancel). It returns the
// request's row and the request: that row, or the element of a batch.
// The search back costs a pass over the session only for a cancel whose
// request was answered first or never sent.
func (m *Model) cancelled(sess uint32, dir store.Dir, id []byte, at int32) (int32, *row) {
	if q, ok := m.pending[pairKey{sess, dir, string(id)}]; ok {
		if req := m.requestIn(q, id); req != nil {
			return q, req
		}
	}
	rows := m.sessRows[sess]
	for k := len(rows) - 1; k >= 0; k-- {
		q := rows[k]
		if q == at || m.rows[q].dir != dir {
			continue
		}
		if req := m.requestIn(q, id); req != nil {
			return q, req
		}
	}
	return -1, nil
}

// requestIn returns the request with id (jsonrpc.CanonicalID's form) that row q is
// or, for a batch, holds (the last such), nil if none.
func (m *Model) requestIn(q int32, id []byte) *row {
	r := &m.rows[q]
	switch r.kind {
	case jsonrpc.Request:
		if string(jsonrpc.CanonicalID(m.idBytes(r))) == string(id) {
			return r
		}
	case jsonrpc.Batch:
		els := m.elemsOf(q)
		for i := len(els) - 1; i >= 0; i-- {
			if e := &els[i]; e.kind == jsonrpc.Request && string(jsonrpc.CanonicalID(m.idBytes(e))) == string(id) {
				return e
			}
		}
	}
	return nil
}

// cancelLink returns r's link (r is row at, or an element of it), nil
// without one.
func (m *Model) cancelLink(r *row, at int32) *CancelLink {
	if r.cancel < 0 {
		return nil
	}
	o := &m.rows[r.cancel]
	l := &CancelLink{Index: int(r.cancel), Seq: o.seq, After: time.Duration(o.time - r.time)}
	req := r
	if r.kind != jsonrpc.Request {
		l.After = -l.After
		if req = m.linkedRequest(r.cancel, at); req == nil {
			return l
		}
	}
	if req.pair >= 0 {
		l.Answer = m.rows[req.pair].seq
	}
	return l
}

// linkedRequest returns the request at row q that a cancel at row at
// names: q itself, or the element of batch q whose cancel it is (or, when
// an earlier cancel named it first, its request with a cancel).
func (m *Model) linkedRequest(q, at int32) *row {
	if m.rows[q].kind != jsonrpc.Batch {
		return &m.rows[q]
	}
	els := m.elemsOf(q)
	var named *row
	for i := range els {
		e := &els[i]
		if e.kind != jsonrpc.Request || e.cancel < 0 {
			continue
		}
		if e.cancel == at {
			return e
		}
		if named == nil {
			named = e
		}
	}
	return named
}
