package inspector

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Batches (protocol 2025-03-26): one frame that is a JSON array of
// messages. A batch stays one row, because it is one frame: its seq, time
// and bytes are the frame's, and everything that names a message by its
// seq (the detail pane, marks, export, lint's findings, show's lines)
// names the frame the peer sent, which rows of their own for its elements
// would each claim. Its elements are kept beside the rows, as rows that
// are never shown (row.elem), so that pairing and the filter see the
// messages a batch carries: each request in one pairs with its answer
// however that came back (in an array of answers, or, as
// server-everything answers over Streamable HTTP, each as an SSE event of
// its own), and a batch passes a filter when one of its elements, judged
// as a message of its own, passes.
//
// A batch's summary says only that it is one, so its frame is read when
// its row is added. Nearly no recording holds a batch: the others pay a
// comparison of a kind at each row they add or filter, nothing more.

// Elem is one message of a batch, as the batch's row lists it.
type Elem struct {
	Kind          jsonrpc.Kind
	Method, Tool  string // a response's are its request's, as on rows
	ID            string
	IsError       bool
	ErrCode       int
	InputRequired bool
	Size          int // its bytes in the batch's frame
	// Pair is the stable index of the message it pairs with (a batch's
	// row for one of its elements), -1 without one; PairSeq is that
	// message's seq, in the batch's session. Latency is the time between.
	Pair    int
	PairSeq uint64
	Latency time.Duration
	// Cancel links a request and a cancel naming it, as Row.Cancel does.
	Cancel *CancelLink
}

// Pairs returns the stable indexes of the messages r pairs with, each
// once, in the order of r's elements for a batch; none without a pair.
// A request's pairs are its answer, then the cancel naming it; a cancel's
// is the request it names.
func (r Row) Pairs() []int {
	var out []int
	add := func(pair int, cancel *CancelLink) {
		if pair >= 0 && !containsInt(out, pair) {
			out = append(out, pair)
		}
		if cancel != nil && !containsInt(out, cancel.Index) {
			out = append(out, cancel.Index)
		}
	}
	if r.Batch == nil {
		add(r.Pair, r.Cancel)
	}
	for _, e := range r.Batch {
		add(e.Pair, e.Cancel)
	}
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// answer pairs the response or error ans, whose frame is row ansRow (ans
// is that row, or one of its elements), with the request pending at row
// q: the row itself, or the request among q's elements that has ans's
// id. ans takes its request's method and tool, so that method: and tool:
// filters show whole exchanges. A batch's own row pairs with its first
// answer, which says it is answered to those who look at rows only.
func (m *Model) answer(ans *row, ansRow, q int32) {
	req := &m.rows[q]
	if req.kind == jsonrpc.Batch {
		if req = m.pendingElem(q, m.idBytes(ans)); req == nil {
			return
		}
		if m.rows[q].pair < 0 {
			m.rows[q].pair = ansRow
		}
	}
	ans.pair, req.pair = q, ansRow
	ans.method, ans.tool = req.method, req.tool
}

// pendingElem returns the first request among batch q's elements with the
// given id that no answer has paired with yet, nil if none has it.
func (m *Model) pendingElem(q int32, id []byte) *row {
	els := m.elemsOf(q)
	for i := range els {
		e := &els[i]
		if e.kind == jsonrpc.Request && e.pair < 0 && jsonrpc.SameID(m.idBytes(e), id) {
			return e
		}
	}
	return nil
}

// elemsOf returns the elements of batch row idx: nil for any other row,
// and for a batch whose frame was not read or holds no message.
func (m *Model) elemsOf(idx int32) []row {
	run, ok := m.batches[idx]
	if !ok {
		return nil
	}
	return m.elems[run[0]:run[1]:run[1]]
}

func (m *Model) idBytes(r *row) []byte { return m.ids[r.idOff : r.idOff+uint32(r.idLen)] }

// addBatch takes the elements of batch row i from its frame, pairs them
// as add pairs rows, and says whether one of them counts as an error (the
// batch then counts as one in its session). A frame that is not there to
// read (nil), or holds no message, leaves the row a bare batch.
func (m *Model) addBatch(i int32, frame []byte) (isError bool) {
	b := m.rows[i]
	whole := &store.Message{Frame: frame}
	parts := store.Unbatched([]*store.Message{whole})
	if parts[0] == whole {
		return false // not taken apart: no frame, or an empty batch
	}
	start := int32(len(m.elems))
	for _, p := range parts {
		c := jsonrpc.Classify(p.Frame)
		id := c.ID
		if len(id) > 0xffff {
			id = id[:0xffff]
		}
		e := b
		e.elem, e.pair, e.cancel, e.role = true, -1, -1, roleMessage
		e.kind, e.isError, e.inputRequired, e.errCode = c.Kind, c.IsError, c.InputRequired, int32(c.ErrorCode)
		e.method, e.tool = m.str([]byte(c.Method)), m.str([]byte(c.Tool))
		e.idOff, e.idLen = uint32(len(m.ids)), uint16(len(id))
		e.size = uint32(min(len(p.Frame), 1<<32-1))
		m.ids = append(m.ids, id...)
		switch {
		case c.Kind == jsonrpc.Request && id != "":
			m.pending[pairKey{b.sess, b.dir, string(jsonrpc.CanonicalID([]byte(id)))}] = i
		case (c.Kind == jsonrpc.Response || c.Kind == jsonrpc.Error) && id != "":
			k := pairKey{b.sess, 1 - b.dir, string(jsonrpc.CanonicalID([]byte(id)))}
			if q, ok := m.pending[k]; ok {
				delete(m.pending, k)
				m.answer(&e, i, q)
				if m.rows[i].pair < 0 {
					m.rows[i].pair = q
				}
			}
		}
		if c.Kind == jsonrpc.Notification {
			m.linkCancel(&e, i, p.Frame)
		}
		isError = isError || countsAsError(&e)
		m.elems = append(m.elems, e)
	}
	if m.batches == nil {
		m.batches = map[int32][2]int32{}
	}
	m.batches[i] = [2]int32{start, int32(len(m.elems))}
	return isError
}

// answerOf returns the answer to request req (a row, or an element of
// batch row reqRow) that pairing found: the row it paired with, or the
// element of that row, a batch, that answers it.
func (m *Model) answerOf(req *row, reqRow int32) *row {
	p := &m.rows[req.pair]
	if p.kind != jsonrpc.Batch {
		return p
	}
	els := m.elemsOf(req.pair)
	for i := range els {
		if e := &els[i]; e.pair == reqRow && jsonrpc.SameID(m.idBytes(e), m.idBytes(req)) {
			return e
		}
	}
	return p
}

// batchRow fills out, the row of batch idx, with its elements: what its
// row shows of them, and the latency of its slowest answered element.
func (m *Model) batchRow(idx int32, out *Row) {
	els := m.elemsOf(idx)
	if els == nil {
		return
	}
	out.Batch = make([]Elem, len(els))
	out.Latency = 0
	for i := range els {
		e := &els[i]
		out.Batch[i] = Elem{
			Kind: e.kind, Method: m.strs[e.method], Tool: m.strs[e.tool], ID: m.id(e),
			IsError: e.isError, ErrCode: int(e.errCode), InputRequired: e.inputRequired,
			Size: int(e.size), Pair: int(e.pair), Cancel: m.cancelLink(e, idx),
		}
		if e.pair >= 0 {
			out.Batch[i].PairSeq = m.rows[e.pair].seq
			out.Batch[i].Latency = m.latency(e)
			out.Latency = max(out.Latency, out.Batch[i].Latency)
		}
	}
}

// batchNames is what a batch's row says in its method column: how many
// messages it holds, and each one's name as a row of its own shows it
// ("2 msgs: tools/call echo, tools/call get-sum [-32602]"); an element
// with no method (a response nothing pairs with) is named by its kind.
func batchNames(els []Elem) string {
	names := make([]string, len(els))
	for i, e := range els {
		names[i] = msgName(e.Kind, e.Method, e.Tool, e.IsError, e.ErrCode, e.InputRequired)
		if names[i] == "" {
			names[i] = e.Kind.String()
		}
		names[i] += e.Cancel.mark(e.Kind)
	}
	noun := "msgs"
	if len(els) == 1 {
		noun = "msg"
	}
	return fmt.Sprintf("%d %s: %s", len(els), noun, strings.Join(names, ", "))
}

// batchIDs is a batch's id column: its elements' ids, comma-separated.
func batchIDs(els []Elem) string {
	var ids []string
	for _, e := range els {
		if e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	return strings.Join(ids, ",")
}

// name is what r's method column says: msgName, or a batch's
// batchNames.
func (r *Row) name() string {
	if r.Batch != nil {
		return batchNames(r.Batch)
	}
	return msgName(r.Kind, r.Method, r.Tool, r.IsError, r.ErrCode, r.InputRequired) + r.Cancel.mark(r.Kind)
}

// msgName is a message's method column: method and tool, an error's code,
// "[isError]" for a tool result that reports a failure, and "[input
// required]" for a result asking the client for input. The marks are what
// tells a failed call apart where there is no colour (mcpspy show).
func msgName(kind jsonrpc.Kind, method, tool string, isError bool, code int, inputRequired bool) string {
	name := method
	if tool != "" {
		name += " " + tool
	}
	return name + msgMarks(kind, isError, code, inputRequired)
}

// msgMarks is the end of msgName after the method and tool: the marks.
func msgMarks(kind jsonrpc.Kind, isError bool, code int, inputRequired bool) string {
	var marks string
	switch {
	case isError && code != 0:
		marks = fmt.Sprintf(" [%d]", code)
	case isError && kind == jsonrpc.Response:
		marks = " [isError]"
	}
	if inputRequired {
		marks += " [input required]"
	}
	return marks
}

// marks is the end of r's method column that says how it went (msgMarks
// and its cancel's mark); "" for a batch, whose column lists its
// messages.
func (r *Row) marks() string {
	if r.Batch != nil {
		return ""
	}
	return msgMarks(r.Kind, r.IsError, r.ErrCode, r.InputRequired) + r.Cancel.mark(r.Kind)
}

// frameOf reads, with frames (a store.Reader's or a Source's), the frame
// of message seq of a session: a batch's, which its row is added with.
// The copy is the caller's; nil when the session has no such message.
func frameOf(frames func(session string, from, to uint64, fn func(seq uint64, frame []byte) error) error, session string, seq uint64) ([]byte, error) {
	var frame []byte
	err := frames(session, seq, seq, func(_ uint64, f []byte) error {
		frame = bytes.Clone(f)
		return nil
	})
	return frame, err
}
