package inspector

import (
	"container/heap"
	"fmt"
	"sort"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Apply adds what a Poll found. New rows go after every row already shown,
// so positions in the visible list do not move: follow mode keeps the
// selection and scroll. frames is read when the filter looks at message
// bodies.
func (m *Model) Apply(b *Batch, frames Source) error {
	var shown []uint64 // per session, the last seq the filter has judged
	if m.filter.needsLint() {
		shown = make([]uint64, len(m.Sessions))
		for i := range m.Sessions {
			shown[i] = m.Sessions[i].LastSeq
		}
	}
	before := m.findingsUpTo(shown)
	for _, info := range b.Sessions {
		m.session(info)
	}
	amended, differed := m.restate(b.Amended)
	m.amends = max(m.amends, b.Amends)
	start := len(m.rows)
	for i := range b.Msgs {
		bm := &b.Msgs[i]
		sess := m.session0(bm.Session)
		if bm.Sum.Seq <= m.Sessions[sess].LastSeq && m.Sessions[sess].Messages > 0 {
			continue // seen already (a poll that raced a previous one)
		}
		var frame []byte
		// Without frames, a bare batch and a cancel linked with nothing.
		if addReadsFrame(bm.Sum.Kind, []byte(bm.Sum.Method)) && frames != nil {
			var err error
			if frame, err = frameOf(frames.Frames, bm.Session, bm.Sum.Seq); err != nil {
				return err
			}
		}
		m.add(sess, &bm.Sum, []byte(bm.Sum.Method), []byte(bm.Sum.ID), []byte(bm.Sum.Tool), frame)
	}
	if err := m.resolveMalformed(frames); err != nil {
		return err
	}
	// Before the early return: a poll may bring only a session's end,
	// which decides its unanswered requests.
	if frames != nil {
		if err := m.refreshLint(frames); err != nil {
			return err
		}
		for i, n := range m.findingsUpTo(shown) {
			m.lateFindings += max(0, n-before[i])
		}
	}
	// After lint is up to date, before the new rows: visible stays in
	// display order.
	if err := m.reshow(amended, differed, frames); err != nil {
		return err
	}
	if len(m.rows) == start {
		return nil
	}
	if m.filter.needsLint() {
		if err := m.lintScope(frames); err != nil { // a new session, say
			return err
		}
	}
	added := m.mergeByTime(start)
	m.order = append(m.order, added...)
	keep, err := m.matches(added, m.filter, frames)
	if err != nil {
		return err
	}
	for i, idx := range added {
		if keep[i] && m.inScope(idx) {
			m.visible = append(m.visible, idx)
		}
	}
	return nil
}

// session0 returns the index of a session known by id, adding a bare one
// if a summary arrives before its info.
func (m *Model) session0(id string) uint32 {
	if i, ok := m.sessIdx[id]; ok {
		return i
	}
	return m.session(store.SessionInfo{ID: id})
}

// After returns how far the model has read, for the next Poll.
func (m *Model) After() Mark {
	out := Mark{Seqs: make(map[string]uint64, len(m.Sessions)), Amends: m.amends}
	for _, s := range m.Sessions {
		out.Seqs[s.Info.ID] = s.LastSeq
	}
	return out
}

// FollowMark is After with the identity of the cassette read (Mark.File
// and Mark.Starts), so that a Poll notices when it is replaced.
func (m *Model) FollowMark() Mark {
	out := m.After()
	out.File = m.file
	out.Starts = make(map[string]time.Time, len(m.Sessions))
	for _, s := range m.Sessions {
		if !s.Info.Start.IsZero() { // a session known only by its messages so far
			out.Starts[s.Info.ID] = s.Info.Start
		}
	}
	return out
}

// mergeByTime orders rows[start:], which come as runs of one session in
// seq order, by time, keeping each session's seq order (a k-way merge).
func (m *Model) mergeByTime(start int) []int32 {
	var h runHeap
	h.rows = m.rows
	for i := start; i < len(m.rows); {
		j := i + 1
		for j < len(m.rows) && m.rows[j].sess == m.rows[i].sess && m.rows[j].seq > m.rows[j-1].seq {
			j++
		}
		h.runs = append(h.runs, [2]int32{int32(i), int32(j)})
		i = j
	}
	out := growHuge([]int32(nil), len(m.rows)-start)
	if len(h.runs) == 1 {
		for i := start; i < len(m.rows); i++ {
			out = append(out, int32(i))
		}
		return out
	}
	heap.Init(&h)
	for len(h.runs) > 0 {
		r := &h.runs[0]
		out = append(out, r[0])
		r[0]++
		if r[0] == r[1] {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return out
}

type runHeap struct {
	rows []row
	runs [][2]int32 // [next, end)
}

func (h *runHeap) Len() int { return len(h.runs) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.runs[i][0], h.runs[j][0]
	if h.rows[a].time != h.rows[b].time {
		return h.rows[a].time < h.rows[b].time
	}
	return a < b
}
func (h *runHeap) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap) Push(x any)    { h.runs = append(h.runs, x.([2]int32)) }
func (h *runHeap) Pop() any {
	x := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return x
}

func (m *Model) inScope(idx int32) bool { return m.sessionInScope(int(m.rows[idx].sess)) }

// sessionInScope says whether the table shows session s. A session that
// follow mode adds later is in scope only when every session is.
func (m *Model) sessionInScope(s int) bool {
	return m.scope == nil || s < len(m.scope) && m.scope[s]
}

// Filter returns the filter in force (nil: none).
func (m *Model) Filter() *Filter { return m.filter }

// Scope returns the session index the table is limited to, -1 for all
// or for several (SetScopes).
func (m *Model) Scope() int {
	one := -1
	for s, in := range m.scope {
		switch {
		case !in:
		case one >= 0:
			return -1
		default:
			one = s
		}
	}
	return one
}

// SetFilter applies a filter (nil for none). frames is read when the
// filter looks at message bodies. On error the previous filter stays.
func (m *Model) SetFilter(f *Filter, frames Source) error {
	if f.Empty() {
		f = nil
	}
	old := m.filter
	m.filter = f
	if err := m.refilter(frames); err != nil {
		m.filter = old
		return err
	}
	return nil
}

// SetScope limits the table to one session (-1: all).
func (m *Model) SetScope(sess int, frames Source) error {
	return m.SetScopes([]int{sess}, frames)
}

// SetScopes limits the table to the sessions sess, by index: mcpspy show
// with --session repeated. None, or one out of range (-1), is all.
func (m *Model) SetScopes(sess []int, frames Source) error {
	var scope []bool
	for _, s := range sess {
		if s < 0 || s >= len(m.Sessions) {
			scope = nil
			break
		}
		if scope == nil {
			scope = make([]bool, len(m.Sessions))
		}
		scope[s] = true
	}
	m.scope = scope
	return m.refilter(frames)
}

// ScopeNamesGrow makes the scope, once SetScopes has limited it, take in
// every session added later that one of names (ids or names, as
// --session takes them) names: show --follow --session NAME then follows
// each new run recorded under that name, as --filter session:NAME does.
func (m *Model) ScopeNamesGrow(names []string) { m.scopeNames = names }

func (m *Model) refilter(frames Source) error {
	m.lateFindings = 0
	if m.filter.needsLint() {
		if err := m.lintScope(frames); err != nil {
			return err
		}
	}
	if !m.filter.NeedsBody() {
		m.refilterFields()
		return nil
	}
	keep, err := m.matchAll(m.filter, frames)
	if err != nil {
		return err
	}
	vis := make([]int32, 0, len(m.visible))
	for _, idx := range m.order {
		if keep[idx] && m.inScope(idx) {
			vis = append(vis, idx)
		}
	}
	m.visible = vis
	return nil
}

// refilterFields recomputes the visible rows from summaries alone.
func (m *Model) refilterFields() {
	f := m.filter
	if f == nil && m.scope == nil {
		m.visible = append(growHuge(m.visible[:0], len(m.order)), m.order...)
		return
	}
	if f != nil {
		f.prepare(m)
	}
	vis := make([]int32, 0, len(m.order)/4)
	for _, idx := range m.order {
		if m.inScope(idx) && (f == nil || f.match(m, idx, &msgData{})) {
			vis = append(vis, idx)
		}
	}
	m.visible = vis
}

// matchAll evaluates f on every row in scope; the result is indexed by
// row. Body filters read the frames one session at a time.
func (m *Model) matchAll(f *Filter, frames Source) ([]bool, error) {
	keep := make([]bool, len(m.rows))
	if f == nil {
		for i := range keep {
			keep[i] = true
		}
		return keep, nil
	}
	f.prepare(m)
	if f.needsLint() {
		if err := m.lintScope(frames); err != nil {
			return nil, err
		}
	}
	for s := range m.Sessions {
		if !m.sessionInScope(s) {
			continue
		}
		if err := m.scanSession(f, frames, m.sessRows[s], keep, nil); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// matches evaluates f on the given rows (any sessions, any order).
func (m *Model) matches(idxs []int32, f *Filter, frames Source) ([]bool, error) {
	out := make([]bool, len(idxs))
	if f == nil {
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	f.prepare(m)
	if !f.NeedsBody() {
		for i, idx := range idxs {
			out[i] = f.match(m, idx, &msgData{})
		}
		return out, nil
	}
	// Group by session, in seq order, to read each session's records once.
	pos := make(map[int32]int, len(idxs))
	bySess := map[uint32][]int32{}
	for i, idx := range idxs {
		pos[idx] = i
		s := m.rows[idx].sess
		bySess[s] = append(bySess[s], idx)
	}
	keep := map[int32]bool{}
	for _, list := range bySess {
		sort.Slice(list, func(a, b int) bool { return m.rows[list[a]].seq < m.rows[list[b]].seq })
		if err := m.scanSession(f, frames, list, nil, keep); err != nil {
			return nil, err
		}
	}
	for idx, ok := range keep {
		out[pos[idx]] = ok
	}
	return out, nil
}

// scanSession evaluates f on rows (one session, seq order); results go to
// keep (by row) or keepMap. The summary terms go first, so that only the
// rows they pass are read further: their HTTP metadata for the HTTP
// terms, then the frames of those the HTTP terms pass for text and
// regexp.
func (m *Model) scanSession(f *Filter, frames Source, rows []int32, keep []bool, keepMap map[int32]bool) error {
	set := func(idx int32, ok bool) {
		if keep != nil {
			keep[idx] = ok
		} else {
			keepMap[idx] = ok
		}
	}
	reads := f.reads()
	if len(rows) == 0 || reads == 0 || frames == nil {
		for _, idx := range rows {
			set(idx, f.match(m, idx, &msgData{}))
		}
		return nil
	}
	pass := make([]int32, 0, len(rows)) // not rows itself: it may be sessRows
	for _, idx := range rows {
		if f.matchReading(m, idx, 0, nil) {
			pass = append(pass, idx)
		} else {
			set(idx, false)
		}
	}
	id := m.Sessions[m.rows[rows[0]].sess].Info.ID
	var err error
	if reads&readsHTTP != 0 {
		pass, err = m.sieve(f, readsHTTP, pass, set, func(visit func(uint64, *msgData)) error {
			seqs := make([]uint64, len(pass))
			for i, idx := range pass {
				seqs[i] = m.rows[idx].seq
			}
			var in msgData
			return frames.HTTPBriefs(id, seqs, func(seq uint64, b store.HTTPBrief) error {
				in.http = b
				visit(seq, &in)
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	if reads&readsMeta != 0 && len(pass) > 0 {
		first, last := m.rows[pass[0]].seq, m.rows[pass[len(pass)-1]].seq
		pass, err = m.sieve(f, readsMeta, pass, set, func(visit func(uint64, *msgData)) error {
			var in msgData
			return frames.Messages(id, first, last, func(msg *store.Message) error {
				in = msgData{http: msg.HTTP.Brief()}
				if msg.HTTP != nil {
					in.streamID = msg.HTTP.StreamID
				}
				visit(msg.Seq, &in)
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	if reads&readsFrame != 0 && len(pass) > 0 {
		first, last := m.rows[pass[0]].seq, m.rows[pass[len(pass)-1]].seq
		pass, err = m.sieve(f, readsFrame, pass, set, func(visit func(uint64, *msgData)) error {
			var in msgData
			return frames.Frames(id, first, last, func(seq uint64, frame []byte) error {
				in.frame = frame
				visit(seq, &in)
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	for _, idx := range pass {
		set(idx, true)
	}
	return nil
}

// sieve keeps the rows (one session, seq order) that pass the terms
// reading what, given what scan lends visit for each seq; a row scan
// skips is judged on nothing read. Rows it drops are set false. It
// reuses rows' array.
func (m *Model) sieve(f *Filter, what reads, rows []int32, set func(int32, bool), scan func(visit func(uint64, *msgData)) error) ([]int32, error) {
	out, j := rows[:0], 0
	judge := func(idx int32, in *msgData) {
		if f.matchReading(m, idx, what, in) {
			out = append(out, idx)
		} else {
			set(idx, false)
		}
	}
	err := scan(func(seq uint64, in *msgData) {
		for j < len(rows) && m.rows[rows[j]].seq < seq {
			judge(rows[j], &msgData{})
			j++
		}
		if j < len(rows) && m.rows[rows[j]].seq == seq {
			judge(rows[j], in)
			j++
		}
	})
	if err != nil {
		return nil, err
	}
	for ; j < len(rows); j++ {
		judge(rows[j], &msgData{})
	}
	return out, nil
}

// rowOf finds the row of message seq of session sess.
func (m *Model) rowOf(sess uint32, seq uint64) (int32, bool) {
	rows := m.sessRows[sess]
	i := sort.Search(len(rows), func(i int) bool { return m.rows[rows[i]].seq >= seq })
	if i < len(rows) && m.rows[rows[i]].seq == seq {
		return rows[i], true
	}
	return -1, false
}

// matchesNow says whether message idx is in scope and passes the filter
// as things stand now, reading its frame if the filter needs it.
func (m *Model) matchesNow(idx int32, src Source) (bool, error) {
	f := m.filter
	if !m.inScope(idx) || f == nil {
		return m.inScope(idx), nil
	}
	f.prepare(m)
	var in msgData
	if f.NeedsBody() {
		r := m.row(int(idx))
		msg, err := src.Message(r.Ref)
		if err != nil {
			return false, err
		}
		in = msgData{frame: msg.Frame, http: msg.HTTP.Brief()}
		if msg.HTTP != nil {
			in.streamID = msg.HTTP.StreamID
		}
	}
	return f.match(m, idx, &in), nil
}

// whyHidden says why the message with stable index idx, what names it
// (its pair), is not in the table: the sessions pane shows other
// sessions than its own, or the filter does not pass it, or it does now
// but follow mode judged it before what it passes on came (the answer
// that gives it a latency, a lint finding) and rows never move in under
// the selection. "" when it is shown.
func (m *Model) whyHidden(idx int, what string, src Source) string {
	if m.VisibleIndex(idx) >= 0 || idx < 0 || idx >= len(m.rows) {
		return ""
	}
	if !m.inScope(int32(idx)) {
		return fmt.Sprintf("%s is in session %s, which the sessions pane does not show (select it, or all)", what, m.Sessions[m.rows[idx].sess].Info.ID)
	}
	ok, err := m.matchesNow(int32(idx), src)
	switch {
	case err != nil:
		return fmt.Sprintf("%s is hidden by the filter (judging it again failed: %v)", what, err)
	case !ok:
		return what + " is hidden by the filter"
	}
	// The action first: the status line cuts what does not fit.
	return "f Enter shows " + what + ": it passes the filter now, not when it came"
}

// Matches returns, for search (/ with n and N), which rows f matches.
func (m *Model) Matches(f *Filter, frames Source) ([]bool, error) {
	return m.matchAll(f, frames)
}

// NextMatch returns the visible position after (dir 1) or before (dir -1)
// from whose row is marked, wrapping around; -1 if none is.
func (m *Model) NextMatch(marks []bool, from, dir int) int {
	n := len(m.visible)
	for k := 1; k <= n; k++ {
		i := ((from+dir*k)%n + n) % n
		if idx := m.visible[i]; int(idx) < len(marks) && marks[idx] {
			return i
		}
	}
	return -1
}

// ToolStat is one line of the tools summary.
type ToolStat struct {
	Tool    string
	Calls   int
	Errors  int // JSON-RPC errors and isError results
	Pending int // calls without a response (yet), not cancelled
	// Cancelled: calls cancelled (notifications/cancelled) with no
	// response; one answered all the same counts as answered.
	Cancelled int
	P50, P95  time.Duration
}

// ToolStats summarises tools/call per tool over the sessions in scope,
// by name.
func (m *Model) ToolStats() []ToolStat {
	type acc struct {
		ToolStat
		lat []time.Duration
	}
	by := map[uint32]*acc{}
	// call counts r, a row or an element of batch row i, if it is a call.
	call := func(r *row, i int32) {
		if r.kind != jsonrpc.Request || m.strs[r.method] != "tools/call" {
			return
		}
		a := by[r.tool]
		if a == nil {
			a = &acc{ToolStat: ToolStat{Tool: m.strs[r.tool]}}
			by[r.tool] = a
		}
		a.Calls++
		if r.pair < 0 {
			if r.cancel >= 0 {
				a.Cancelled++ // no one waits for its answer any more
			} else {
				a.Pending++
			}
			return
		}
		p := m.answerOf(r, i)
		if p.isError || p.kind == jsonrpc.Error {
			a.Errors++
		}
		a.lat = append(a.lat, m.latency(r))
	}
	for i := range m.rows {
		if !m.inScope(int32(i)) {
			continue
		}
		call(&m.rows[i], int32(i))
		if m.rows[i].kind == jsonrpc.Batch {
			els := m.elemsOf(int32(i))
			for j := range els {
				call(&els[j], int32(i))
			}
		}
	}
	out := make([]ToolStat, 0, len(by))
	for _, a := range by {
		sort.Slice(a.lat, func(i, j int) bool { return a.lat[i] < a.lat[j] })
		a.P50, a.P95 = percentile(a.lat, 50), percentile(a.lat, 95)
		out = append(out, a.ToolStat)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// StreamFilter returns the filter that keeps the messages of the HTTP
// exchange or stream message idx (stable index) came on, as Wireshark's
// "Follow TCP stream" does: its session and stream id
// (store.HTTPMeta.StreamID), "session:s1 stream:6". A POST's stream is
// its body and every message of its answer (a JSON body, or an event
// stream's progress, requests and response); a GET stream is its events;
// a legacy HTTP+SSE connection its event stream. The error says why a
// message has none to follow: it came over stdio or WebSocket (one
// connection: the session), or its metadata has no stream id.
func (m *Model) StreamFilter(idx int, src Source) (string, error) {
	r, ok := m.ByIndex(idx)
	if !ok {
		return "", fmt.Errorf("no message %d to follow the stream of", idx)
	}
	msg, err := src.Message(r.Ref)
	if err != nil {
		return "", err
	}
	switch {
	case msg.HTTP == nil:
		return "", fmt.Errorf("%s #%d came over %s, not on an HTTP stream to follow", r.Session, r.Seq, m.Sessions[m.rows[idx].sess].Info.Transport)
	case msg.HTTP.Stream == store.StreamWS:
		return "", fmt.Errorf("%s #%d went over WebSocket, whose one connection is the whole session: select the session in the sessions pane", r.Session, r.Seq)
	case msg.HTTP.StreamID == 0:
		return "", fmt.Errorf("%s #%d has no stream id to follow (its HTTP metadata was recorded without one)", r.Session, r.Seq)
	}
	return fmt.Sprintf("session:%s stream:%d", r.Session, msg.HTTP.StreamID), nil
}
