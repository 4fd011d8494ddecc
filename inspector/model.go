// Package inspector is the terminal UI over cassettes: a model (messages,
// pairing, filter, selection, tools summary; plain Go, tested with table
// tests) and views built on tview that only draw what the model says.
//
// It only reads cassettes. It never keeps a cassette open: every read is a
// short store.View, because recorders in other processes wait while one
// runs. Only this package imports tview and tcell, and only its view files
// (view*.go) do.
package inspector

import (
	"os"
	"slices"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
)

// row is one message as the table needs it. A million of them must fit in
// well under 300 MB, so strings live in shared tables: method and tool as
// indexes into Model.strs, the id as a slice of Model.ids.
type row struct {
	time    int64 // unix nanoseconds
	seq     uint64
	idOff   uint32
	size    uint32
	errCode int32
	pair    int32 // index of the paired request/response, -1 if none
	// cancel links a request and a notifications/cancelled naming it
	// (pairing.go): a request's is the cancel's row, a cancel's the
	// request's; -1 if none. (It fills padding: a row stays 56 bytes.)
	cancel  int32
	method  uint32
	tool    uint32
	sess    uint32
	idLen   uint16
	dir     store.Dir
	kind    jsonrpc.Kind
	isError bool
	// inputRequired: a 2026-07-28 result asking the client for input.
	inputRequired bool
	// role: what a server's malformed frame is instead, once known
	// (pages.go): an HTTP error page, an SSE endpoint event.
	role frameRole
	// elem: a message inside a batch, kept in Model.elems (batch.go).
	elem bool
}

// Session is one session as the sessions pane shows it.
type Session struct {
	Info     store.SessionInfo
	Messages int
	Errors   int
	LastSeq  uint64
}

// pairKey finds the request a response answers: same session, the
// request's direction, the same id (jsonrpc.CanonicalID: "\u0031" is
// "1", 1.0 is 1, and 1 and "1" differ).
type pairKey struct {
	sess uint32
	dir  store.Dir
	id   string
}

// Model holds every message summary of a cassette, the filtered view over
// them, and the pairing of requests with responses. It is not safe for
// concurrent use: the view owns it and changes it on the UI goroutine.
type Model struct {
	Path     string
	Sessions []Session
	sessIdx  map[string]uint32

	rows     []row
	sessRows [][]int32 // per session, its rows in seq order
	// order is every row index in display order: by time when loaded, then
	// in arrival order, so follow mode only ever appends.
	order []int32

	strs   []string
	strIdx map[string]uint32
	ids    []byte

	pending map[pairKey]int32 // requests not answered yet: their rows, a batch's for its elements
	// elems are the messages inside batches, each batch's in a run that
	// batches gives by the batch's row (batch.go); nil without a batch.
	elems   []row
	batches map[int32][2]int32
	// amends is where the cassette's amendment log was read up to: see
	// Mark.Amends.
	amends uint64

	filter *Filter
	scope  []bool // by session index, whether the table shows it; nil: every session
	// scopeNames are the session names (or ids) the scope was chosen by,
	// with ScopeNamesGrow: a session follow mode adds later that has one
	// joins the scope (a host that starts its server again records a new
	// session under the same name).
	scopeNames []string
	visible    []int32

	// lints holds per session what package lint found, nil until
	// something asked (findings.go); cassette is the lint.Cassette their
	// checkers belong to.
	lints    []*sessionLint
	cassette *lint.Cassette
	// asking says, per session, whether its summaries show a result
	// asking for input (or a batch, which may hold one); askRows counts
	// such messages, and asksFed is what it was when every such session
	// was last checked up to date (-1: never).
	asking  []bool
	askRows int
	asksFed int
	// following says follow mode may add to the sessions that have no
	// end yet, so their checks that need the whole session wait for it.
	// Without it what is loaded is all there is to judge.
	following bool
	// lateFindings counts findings that follow mode found on rows already
	// filtered (an unanswered request, known when its session ends) while
	// the filter asks for lint: rows the filter now matches but does not
	// show until it is applied again (TakeLateFindings).
	lateFindings int
	// pages are the rows that are HTTP error pages, with their status;
	// endpoints, those that are SSE endpoint events, with the URI each
	// names; unresolved, the server's malformed frames that may be either,
	// whose metadata is not read yet (pages.go).
	pages      map[int32]int
	endpoints  map[int32]string
	unresolved []int32
	// file is the cassette file as it was when Open read it (nil for an
	// export): FollowMark's identity.
	file os.FileInfo
}

// NewModel returns an empty model for the cassette at path.
func NewModel(path string) *Model {
	m := &Model{
		Path:    path,
		sessIdx: map[string]uint32{},
		strIdx:  map[string]uint32{},
		pending: map[pairKey]int32{},
		asksFed: -1,
	}
	m.str(nil) // index 0 is the empty string
	return m
}

func (m *Model) str(b []byte) uint32 {
	if i, ok := m.strIdx[string(b)]; ok { // no allocation for the lookup
		return i
	}
	s := string(b)
	i := uint32(len(m.strs))
	m.strs = append(m.strs, s)
	m.strIdx[s] = i
	return i
}

// session adds or updates a session's info and returns its index.
func (m *Model) session(info store.SessionInfo) uint32 {
	if i, ok := m.sessIdx[info.ID]; ok {
		m.Sessions[i].Info = info
		return i
	}
	i := uint32(len(m.Sessions))
	m.Sessions = append(m.Sessions, Session{Info: info})
	m.sessRows = append(m.sessRows, nil)
	m.sessIdx[info.ID] = i
	if m.scope != nil && slices.ContainsFunc(m.scopeNames, info.Named) {
		m.scope = append(m.scope, make([]bool, len(m.Sessions)-len(m.scope))...)
		m.scope[i] = true
	}
	return i
}

// add appends one summary of session sess, whose method, id (JSON text)
// and tool are given as bytes, and, for a batch or a cancel (addReadsFrame),
// its frame (nil for any other message; add keeps none of it). It pairs a
// response with its request, links a cancel with the request it names,
// and returns the new row's index.
func (m *Model) add(sess uint32, s *store.Summary, method, id, tool, frame []byte) int32 {
	if len(id) > 0xffff {
		id = id[:0xffff] // ids that long are junk; keep the prefix
	}
	r := row{
		time: s.Time.UnixNano(), seq: s.Seq, idOff: uint32(len(m.ids)), idLen: uint16(len(id)),
		size: uint32(min(s.Size, 1<<32-1)), errCode: int32(s.ErrorCode), pair: -1, cancel: -1,
		method: m.str(method), tool: m.str(tool), sess: sess,
		dir: s.Dir, kind: s.Kind, isError: s.IsError, inputRequired: s.InputRequired,
	}
	if len(m.ids)+len(id) > cap(m.ids) {
		// Doubling, as append does, into memory advised as huge pages.
		m.ids = growHuge(m.ids, max(len(id), len(m.ids), 4096))
	}
	m.ids = append(m.ids, id...)
	i := int32(len(m.rows))
	switch {
	case s.Kind == jsonrpc.Request && len(id) > 0:
		m.pending[pairKey{sess, s.Dir, string(jsonrpc.CanonicalID(id))}] = i
	case (s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error) && len(id) > 0:
		k := pairKey{sess, 1 - s.Dir, string(jsonrpc.CanonicalID(id))}
		if q, ok := m.pending[k]; ok {
			delete(m.pending, k)
			m.answer(&r, i, q)
		}
	}
	m.rows = append(m.rows, r)
	m.sessRows[sess] = append(m.sessRows[sess], i)
	if frame != nil && s.Kind == jsonrpc.Notification {
		m.linkCancel(&m.rows[i], i, frame)
	}
	m.noteMalformed(i, s)
	isError := countsAsError(&r)
	if s.InputRequired || s.Kind == jsonrpc.Batch {
		if s.Kind == jsonrpc.Batch {
			isError = m.addBatch(i, frame)
		}
		for len(m.asking) <= int(sess) {
			m.asking = append(m.asking, false)
		}
		m.asking[sess] = true
		m.askRows++
	}
	ss := &m.Sessions[sess]
	ss.Messages++
	if isError {
		ss.Errors++
	}
	if s.Seq > ss.LastSeq {
		ss.LastSeq = s.Seq
	}
	return i
}

// Len is the number of messages in the model.
func (m *Model) Len() int { return len(m.rows) }

// Visible is the number of messages the filter and scope let through.
func (m *Model) Visible() int { return len(m.visible) }

// Ref names a message.
type Ref struct {
	Session string
	Seq     uint64
}

// Row is one message as displayed.
type Row struct {
	Ref
	Index   int // index among all messages, stable for the model's life
	Dir     store.Dir
	Time    time.Time
	Delta   time.Duration // since the previous message in display order
	Kind    jsonrpc.Kind
	Method  string
	Tool    string
	ID      string
	IsError bool
	ErrCode int
	// InputRequired marks a result that asks the client for input
	// (2026-07-28): the client sends the request again with it.
	InputRequired bool
	// PageStatus is the 4xx or 5xx status of the HTTP answer whose body
	// this malformed frame is, an error page (pages.go); 0 if it is not.
	PageStatus int
	// Endpoint marks the endpoint event of a legacy HTTP+SSE stream
	// (2024-11-05), a frame that is no JSON-RPC message but names the URI
	// the client is to POST to: EndpointURI, as the event's data has it
	// (pages.go).
	Endpoint    bool
	EndpointURI string
	Size        int
	// Latency is the time from request to response, for both; 0 without
	// a pair. Pair is the paired message's index, -1 without one.
	Latency time.Duration
	Pair    int
	// Cancel links a request and the notifications/cancelled that names
	// it, nil without one (pairing.go).
	Cancel *CancelLink
	// Batch lists the messages of a batch (Kind Batch), nil for any other
	// message. Pair is then the batch's first answer, Latency that of its
	// slowest; each element has its own (batch.go).
	Batch []Elem
}

// Row returns the i-th visible row.
func (m *Model) Row(i int) (Row, bool) {
	if i < 0 || i >= len(m.visible) {
		return Row{}, false
	}
	r := m.row(int(m.visible[i]))
	if i > 0 {
		r.Delta = time.Duration(m.rows[m.visible[i]].time - m.rows[m.visible[i-1]].time)
	}
	return r, true
}

// ByIndex returns the message with the given stable index.
func (m *Model) ByIndex(idx int) (Row, bool) {
	if idx < 0 || idx >= len(m.rows) {
		return Row{}, false
	}
	return m.row(idx), true
}

func (m *Model) row(idx int) Row {
	r := &m.rows[idx]
	out := Row{
		Ref:   Ref{Session: m.Sessions[r.sess].Info.ID, Seq: r.seq},
		Index: idx, Dir: r.dir, Time: time.Unix(0, r.time), Kind: r.kind,
		Method: m.strs[r.method], Tool: m.strs[r.tool], ID: m.id(r),
		IsError: r.isError, ErrCode: int(r.errCode), Size: int(r.size), Pair: int(r.pair),
		InputRequired: r.inputRequired, Cancel: m.cancelLink(r, int32(idx)),
	}
	out.Latency = m.latency(r)
	out.PageStatus = m.pages[int32(idx)]
	if r.role == roleEndpoint {
		out.Endpoint, out.EndpointURI = true, m.endpoints[int32(idx)]
	}
	if r.kind == jsonrpc.Batch {
		m.batchRow(int32(idx), &out)
	}
	return out
}

func (m *Model) id(r *row) string { return string(m.ids[r.idOff : r.idOff+uint32(r.idLen)]) }

func (m *Model) latency(r *row) time.Duration {
	if r.pair < 0 {
		return 0
	}
	d := time.Duration(m.rows[r.pair].time - r.time)
	if d < 0 {
		d = -d
	}
	return d
}

// VisibleIndex returns the position in the visible rows of the message with
// the given stable index, or -1 when the filter hides it.
func (m *Model) VisibleIndex(idx int) int {
	// visible is in display order, which is not index order; order positions
	// are found by a scan, which costs one pass at most per key press.
	for i, v := range m.visible {
		if int(v) == idx {
			return i
		}
	}
	return -1
}
