package replay

import (
	"bytes"
	"sync"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// JSON-RPC batches. Only protocol 2025-03-26 has them, and there an
// implementation MUST support receiving them; the versions after it
// removed them. A batch's elements are handled as messages of their own,
// in order; their answers are gathered and sent as one array once every
// element is done (JSON-RPC 2.0: a batch of requests gets an array of
// responses; one of notifications and responses alone gets nothing, over
// Streamable HTTP a 202). What an element sends before its answer
// (progress, a server→client request) goes out as it comes, on the
// batch's exchange.

var errEmptyBatch = &RPCError{Code: -32600, Message: "Invalid Request: an empty batch"}

// batchVersion is the one protocol version with batches.
const batchVersion = "2025-03-26"

// takesBatches says whether the session's client may send batches: it
// agreed on 2025-03-26 at initialize.
func (s *session) takesBatches() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version == batchVersion
}

// batch handles the elements of the batch b, answering through ex.
func (s *session) batch(b []byte, ex exchange) {
	var elems [][]byte
	jsonrpc.Elements(b, func(v []byte) { elems = append(elems, v) })
	if len(elems) == 0 {
		s.fail(ex, nil, errEmptyBatch) // one error, not an array (JSON-RPC 2.0)
		return
	}
	g := &batchGather{parent: ex, answers: make([][][]byte, len(elems)), pending: len(elems)}
	for i, el := range elems {
		if el[0] == '[' { // a batch in a batch: not a request object
			s.fail(&batchElement{g: g, i: i}, nil, errNotObj)
			continue
		}
		s.handle(el, &batchElement{g: g, i: i})
	}
}

// batchGather collects a batch's answers, by element, and sends them
// when the last element is done.
type batchGather struct {
	parent  exchange
	mu      sync.Mutex
	answers [][][]byte // each element's answers (a fault may send two)
	sse     bool       // an element's recording had an event stream
	pending int
}

func (g *batchGather) elementDone() {
	g.mu.Lock()
	g.pending--
	if g.pending > 0 {
		g.mu.Unlock()
		return
	}
	var out [][]byte
	for _, a := range g.answers {
		out = append(out, a...)
	}
	sse := g.sse
	g.mu.Unlock()
	if len(out) > 0 {
		_ = g.parent.reply(append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']'), sse)
	}
	g.parent.done()
}

// batchElement is the exchange of one element of a batch.
type batchElement struct {
	g    *batchGather
	i    int
	once sync.Once
}

func (e *batchElement) send(msg []byte) error { return e.g.parent.send(msg) }

func (e *batchElement) reply(msg []byte, sse bool) error {
	e.g.mu.Lock()
	defer e.g.mu.Unlock()
	e.g.answers[e.i] = append(e.g.answers[e.i], bytes.Clone(msg))
	e.g.sse = e.g.sse || sse
	return nil
}

func (e *batchElement) done() { e.once.Do(e.g.elementDone) }

// refuse: one element of a batch has no HTTP status of its own; the
// session answers it with the JSON-RPC error that says so.
func (*batchElement) refuse(int, bool, *HTTPRefusal) error { return errNoStatus }
