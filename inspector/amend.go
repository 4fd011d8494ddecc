package inspector

import "github.com/mcptape/mcptape/internal/jsonrpc"

// Amended messages in follow mode. A recorder stores a client's HTTP
// message again once it knows the status of an answer that carried no
// message (store.Session.Amend), which may be after the follower read
// it: Poll reports such messages (Batch.Amended), and the model takes
// their summaries in place of the old ones and judges them again against
// the filter and lint, which read the status; the detail pane reads the
// message afresh whenever it is shown.

// restate takes the summaries of amended messages in place of their rows'
// and returns those rows, and whether any summary differed. An amendment keeps a message's frame, so what
// pairs it (kind, id, direction) and its place in the display order stay;
// the rest is taken as it comes, and the session's error count follows.
// A session whose findings were computed is checked again whole, from the
// messages as they stand now: lint judges refusals by their status.
func (m *Model) restate(msgs []BatchMsg) (idxs []int32, differed bool) {
	for i := range msgs {
		am := &msgs[i]
		sess, ok := m.sessIdx[am.Session]
		if !ok {
			continue
		}
		idx, ok := m.rowOf(sess, am.Sum.Seq)
		if !ok {
			continue // not read yet: it will be, as it stands
		}
		r := &m.rows[idx]
		old := *r
		s := &am.Sum
		r.time, r.size, r.errCode = s.Time.UnixNano(), uint32(min(s.Size, 1<<32-1)), int32(s.ErrorCode)
		r.isError = s.IsError
		els := m.elemsOf(idx)
		for j := range els {
			els[j].time = r.time // what their latency is measured from
		}
		differed = differed || *r != old
		wasError := countsAsError(&old)
		if isError := countsAsError(r); isError != wasError {
			if isError {
				m.Sessions[sess].Errors++
			} else {
				m.Sessions[sess].Errors--
			}
		}
		if l := m.lintOf(int(sess)); l != nil {
			l.checker, l.fed = nil, 0 // see checkSession
		}
		idxs = append(idxs, idx)
	}
	return idxs, differed
}

// countsAsError says whether row r counts in its session's errors, and
// is what the error filter term finds: JSON-RPC errors, results with
// isError and HTTP error pages. A malformed frame is not an error
// (kind:malformed finds those), nor is an SSE endpoint event
// (kind:endpoint).
func countsAsError(r *row) bool {
	return r.isError || r.kind == jsonrpc.Error || r.role == rolePage
}

// reshow judges the amended rows idxs against the filter again, and shows
// or hides each where it stands in the display order; differed says
// whether their summaries changed. Rows shown before may move down one
// place for each row shown above them.
func (m *Model) reshow(idxs []int32, differed bool, frames Source) error {
	f := m.filter
	if len(idxs) == 0 || f == nil {
		return nil // every row in scope is shown, amended or not
	}
	if !differed && f.reads()&readsHTTP == 0 && !f.needsLint() {
		return nil // an amendment changes nothing else the filter reads
	}
	keep, err := m.matches(idxs, f, frames)
	if err != nil {
		return err
	}
	want := make(map[int32]bool, len(idxs))
	for i, idx := range idxs {
		want[idx] = keep[i] && m.inScope(idx)
	}
	// visible is a subsequence of order: one pass over both rebuilds it.
	vis := make([]int32, 0, len(m.visible)+len(idxs))
	j := 0
	for _, idx := range m.order {
		shown := j < len(m.visible) && m.visible[j] == idx
		if shown {
			j++
		}
		if w, ok := want[idx]; ok {
			shown = w
		}
		if shown {
			vis = append(vis, idx)
		}
	}
	m.visible = vis
	return nil
}
