package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// exchange is where the messages about one client frame go. Over stdio and
// WebSocket everything goes to the one connection; over Streamable HTTP an
// exchange is one POST and its response.
//
// send and reply may be called from any goroutine, but the session calls
// them for one exchange from one goroutine at a time, and done exactly once,
// last.
type exchange interface {
	// send writes a message tied to the request before its reply
	// (progress, a server→client request).
	send(msg []byte) error
	// reply writes the response. sse asks Streamable HTTP for an event
	// stream even when nothing else was sent (the recording had one).
	reply(msg []byte, sse bool) error
	// done says nothing more will be written for this frame.
	done()
	// refuse answers the request with an HTTP status and no JSON-RPC
	// message (Reply.HTTPStatus; 404 with expire, Reply.ExpireSession),
	// with more's headers and body if not nil (Reply.Refusal), or says
	// why it cannot: one of the errors below.
	refuse(status int, expire bool, more *HTTPRefusal) error
}

// dropper is an exchange that can break its own connection off
// unanswered, apart from the session's (a Streamable HTTP POST: its
// session is not its connection). drop says whether it will: not once
// the answer has begun.
type dropper interface{ drop() bool }

// Why an exchange cannot refuse a request with an HTTP status: the
// session answers a JSON-RPC error that says so instead.
var (
	errNoStatus  = errors.New("this transport has no HTTP status")
	errStarted   = errors.New("the response had begun before the fault")
	errAccepted  = errors.New("the POST had been answered 202 Accepted before the fault")
	errNoSession = errors.New("2026-07-28 has no session to expire")
	// errSessionless: a handshake-era client of a Streamable HTTP server
	// without sessions (sessions: false) has none to expire either.
	errSessionless = errors.New("this server runs without sessions")
)

// session is one live client: its sources' cursors, the requests it has in
// flight, and the server→client requests waiting for its replies.
type session struct {
	srv  *Server
	num  int // 1, 2, … in the order the server's sessions started
	srcs []SessionSource
	// out sends a session-level message (Streamable HTTP: the GET stream).
	out func(msg []byte) error
	// hangup ends the connection (a CloseAfter fault); may be nil.
	hangup func()

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// draining closes when the client has stopped sending (stdio EOF):
	// answers still being worked on are finished, but nothing waits any
	// more: hung calls end, and delays (Sleep) and server→client
	// requests give their calls up (giveup.go).
	draining  chan struct{}
	drainOnce sync.Once
	// leftWhy, once set, says the session ends because its client
	// closed the connection (clientLeft).
	leftWhy atomic.Pointer[string]

	nextID atomic.Int64

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // request id (jsonrpc.CanonicalID) → cancel
	// initializing is open while an initialize is being answered off the
	// reading goroutine (a source that may block, such as a live server):
	// requests read after it wait for its answer, as the session's version
	// and the server they reach depend on it. A client that waits for the
	// answer, as the spec asks, never notices.
	initializing chan struct{}
	// listeners are the in-flight subscriptions/listen requests: in the
	// stateless era over HTTP, session-level messages travel on them.
	listeners map[string]*lockedExchange
	// pendingListen holds session-level messages sent while no listen
	// stream was ready; the next one to open gets them after its first
	// message (the acknowledgement).
	pendingListen listenQueue
	waiters       map[string]chan callReply // our request id (plain decimal, its canonical form) → reply
	// barrierPings are the progress barrier's pings not yet answered in
	// time, by id; barrierOff says one of them went unanswered, and the
	// barrier waits no more until a late answer comes (see
	// ProgressBarrier).
	barrierPings map[string]bool
	barrierOff   bool
	// lastTurn is the turn of the latest message handed to sources that
	// may block (see Sequencer).
	lastTurn chan struct{}
	version  string
	hello    json.RawMessage // the initialize params (ClientHello)
	// logging: the initialize answer this client got declared the
	// logging capability (see answerSetLevel).
	logging bool
	// subscribes: that answer declared resources.subscribe (see
	// answerSubscribe); subscribed are the URIs the client is subscribed
	// to by resources/subscribe.
	subscribes bool
	subscribed map[string]bool
	// sessionless: the session of a 2026-07-28 client's requests over
	// HTTP, which come without a session id (http_conn.go).
	sessionless bool

	closeOnce sync.Once
}

type callReply struct {
	result json.RawMessage
	err    *RPCError
}

func (r callReply) unpack() (json.RawMessage, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.result, nil
}

func (srv *Server) newSession(parent context.Context, out func([]byte) error, hangup func()) *session {
	ctx, cancel := context.WithCancel(parent)
	s := &session{
		srv: srv, out: out, hangup: hangup, ctx: ctx, cancel: cancel, draining: make(chan struct{}),
		inflight: map[string]context.CancelFunc{}, listeners: map[string]*lockedExchange{},
		waiters: map[string]chan callReply{}, num: int(srv.sessions.Add(1)),
	}
	for _, src := range srv.sources {
		s.srcs = append(s.srcs, src.Open())
	}
	return s
}

// close cancels everything in flight, waits for it, and then closes the
// sources that hold something open for the session (SessionCloser).
func (s *session) close() {
	s.cancel()
	s.wg.Wait()
	s.closeOnce.Do(func() {
		for _, src := range s.srcs {
			if c, ok := src.(SessionCloser); ok {
				c.Close()
			}
		}
	})
}

// drain lets the answers in flight finish, then closes the session.
func (s *session) drain() {
	s.drainOnce.Do(func() { close(s.draining) })
	s.wg.Wait()
	s.close()
}

var (
	errParse   = &RPCError{Code: -32700, Message: "Parse error"}
	errBatch   = &RPCError{Code: -32600, Message: "Invalid Request: batches are only for protocol 2025-03-26"}
	errNotObj  = &RPCError{Code: -32600, Message: "Invalid Request: not a JSON-RPC object"}
	errVersion = &RPCError{Code: -32600, Message: `Invalid Request: jsonrpc must be "2.0"`}
	errID      = &RPCError{Code: -32600, Message: "Invalid Request: id must be a string or a number"}
	errShape   = &RPCError{Code: -32600, Message: "Invalid Request: neither a request, a notification nor a response"}
	errMethod  = &RPCError{Code: -32600, Message: "Invalid Request: method must be a string"}
	// MCP requests carry a string or integer id, never null (JSON-RPC
	// 2.0 allows null but discourages it); a notification has no id
	// member. A request with a null id answered as a notification would
	// leave its sender waiting for ever.
	errNullID = &RPCError{Code: -32600, Message: "Invalid Request: id must not be null (leave id out for a notification)"}
)

// handle takes one frame from the client. Matching happens here, in
// arrival order; answers that take time continue on their own goroutine.
func (s *session) handle(frame []byte, ex exchange) {
	b := bytes.Trim(frame, " \t\r\n")
	if len(b) == 0 {
		ex.done()
		return
	}
	// One pass over the frame: validate and slice (see jsonscan.go).
	var w rpcFields
	var fail *RPCError
	switch {
	case b[0] == '{':
		var err error
		if w, err = splitRPC(b); err != nil {
			fail = errParse
		}
	case !jsonrpc.Valid(b):
		fail = errParse
	case b[0] == '[' && s.takesBatches():
		s.batch(b, ex) // 2025-03-26 (batch.go)
		return
	case b[0] == '[':
		fail = errBatch
	default:
		fail = errNotObj
	}
	if fail != nil {
		s.fail(ex, nil, fail)
		return
	}
	id := json.RawMessage(w.id)
	nullID := string(id) == "null"
	if nullID {
		id = nil
	}
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		s.fail(ex, nil, errID)
		return
	}
	if len(w.jsonrpc) == 0 || w.jsonrpc[0] != '"' || keyString(w.jsonrpc) != "2.0" {
		s.fail(ex, id, errVersion)
		return
	}
	var method string
	if len(w.method) > 0 {
		if w.method[0] != '"' {
			s.fail(ex, id, errMethod)
			return
		}
		method = keyString(w.method)
	}
	w2 := struct{ Method, Params, Result, Error json.RawMessage }{w.method, w.params, w.result, w.err}
	switch w := w2; {
	case len(w.Method) > 0 && nullID:
		s.fail(ex, nil, errNullID)
	case nullID && (len(w.Result) > 0 || len(w.Error) > 0):
		// A reply whose sender could not tell which request it answers
		// (JSON-RPC's error for a request it could not parse): nothing
		// waits for it, and a reply gets no reply.
		s.srv.warnf("client sent a reply with id null, which answers none of mcpmock's requests: %.200s", frame)
		ex.done()
	case len(w.Method) > 0 && id != nil:
		s.journal(id, method, w.Params)
		s.request(&Request{ID: id, Method: method, Params: w.Params, Frame: frame, checked: w.Params}, ex)
	case len(w.Method) > 0:
		s.journal(nil, method, w.Params)
		s.notification(&Request{Method: method, Params: w.Params, Frame: frame, checked: w.Params}, ex)
	case id != nil && (len(w.Result) > 0 || len(w.Error) > 0):
		s.response(string(id), w.Result, w.Error)
		ex.done()
	default:
		s.fail(ex, id, errShape)
	}
}

func (s *session) fail(ex exchange, id json.RawMessage, e *RPCError) {
	_ = ex.reply(errorMessage(id, e), false)
	ex.done()
}

// response routes the client's reply to one of our requests. Our ids
// are integers in plain decimal, the waiters' keys; the client may write
// one another way (1.0, 1e0), and it is still the same id.
func (s *session) response(id string, result, rpcErr json.RawMessage) {
	key := jsonrpc.CanonicalIDString(id)
	s.mu.Lock()
	ch := s.waiters[key]
	delete(s.waiters, key)
	late := ch == nil && s.barrierPings[key]
	if late { // the client answers ping, only slowly: wait for it again
		delete(s.barrierPings, key)
		s.barrierOff = false
	}
	s.mu.Unlock()
	if late {
		s.srv.warnf("client answered the progress barrier's ping %s late; replies after progress wait for its ping again", id)
		return
	}
	if ch == nil {
		s.srv.warnf("client answered request %s, which mcpmock did not send or no longer waits for", id)
		return
	}
	r := callReply{result: result}
	if len(rpcErr) > 0 {
		r.err = &RPCError{}
		if json.Unmarshal(rpcErr, r.err) != nil {
			r.err = &RPCError{Code: -32603, Message: string(rpcErr)}
		}
	}
	ch <- r
}

func (s *session) notification(req *Request, ex exchange) {
	defer ex.done()
	if req.Method == "notifications/cancelled" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			s.cancelRequest(string(p.RequestID))
		}
		return
	}
	for i, src := range s.srcs {
		if p, ok := src.(Preparer); ok {
			if pr, ok := p.Prepare(req); ok {
				s.refuseNote(ex, pr.Reply)
				s.sendAfter(pr.Reply.After, req)
				return
			}
			continue
		}
		// A source that may block: ask it and the rest off this goroutine.
		rest := s.srcs[i:]
		s.takeTurn(req)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer req.turn.pass()
			for _, src := range rest {
				if r, ok := src.Answer(s.ctx, &peer{s: s, ex: nopExchange{}, req: req}, req); ok {
					s.sendAfter(r.After, req)
					return
				}
			}
		}()
		return
	}
}

func (s *session) request(req *Request, ex exchange) {
	if req.Method == "ping" {
		_ = ex.reply(resultMessage(req.ID, nil), false)
		ex.done()
		return
	}
	s.srv.noteEra(req)
	ctx, cancel := context.WithCancel(s.ctx)
	// By value, so that a cancel naming it another way (3e0 for 3)
	// finds it (cancelRequest).
	idKey := jsonrpc.CanonicalIDString(string(req.ID))
	listen := req.Method == "subscriptions/listen"
	s.mu.Lock()
	s.inflight[idKey] = cancel
	if listen {
		l := &lockedExchange{ex: ex, queue: &s.pendingListen, queueMu: &s.mu, filter: filterOf(req.Params)}
		s.listeners[idKey] = l
		ex = l
	}
	s.mu.Unlock()
	end := func() {
		s.mu.Lock()
		delete(s.inflight, idKey)
		if listen {
			delete(s.listeners, idKey)
		}
		s.mu.Unlock()
		cancel()
	}
	for i, src := range s.srcs {
		p, isPrep := src.(Preparer)
		if !isPrep {
			s.mu.Lock()
			before := s.initializing
			var mine chan struct{}
			if req.Method == "initialize" {
				mine = make(chan struct{})
				s.initializing = mine
			}
			s.mu.Unlock()
			s.takeTurn(req)
			ctx := s.withWaitState(ctx)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer end()
				defer req.turn.pass()
				if mine != nil {
					defer close(mine)
				} else if before != nil {
					select {
					case <-before:
					case <-ctx.Done():
						ex.done()
						return
					}
				}
				s.answerFrom(ctx, s.srcs[i:], req, ex)
			}()
			return
		}
		pr, ok := p.Prepare(req)
		if !ok {
			continue
		}
		why := whyUnmatched(p, req, pr)
		if pr.Play == nil && !pr.Reply.NoReply {
			s.finish(ctx, req, ex, pr.Reply, pr.SSE, why)
			end()
			s.background(backgroundOf(p, req), req, ex)
			return
		}
		// The goroutine sees the request only as it waits: the reader
		// goes on to the next frames meanwhile, and this one can go.
		waiting := waitingFor(pr, req)
		ctx := s.withWaitState(ctx)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer end()
			s.play(ctx, pr, waiting, ex, why)
		}()
		return
	}
	if listen && s.versionOf(req) >= statelessVersion {
		// No source has this listen: acknowledged all the same, as a
		// server acknowledges any, whatever the filter.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer end()
			s.holdListen(ctx, req, ex)
		}()
		return
	}
	s.unmatched(ctx, req, ex)
	end()
}

// turn is a message's place in the order its session hands messages to
// sources that may block: it may go once prev has closed, and closes mine
// once it has been passed on or handled.
type turn struct {
	prev <-chan struct{} // nil for the session's first
	mine chan struct{}
	once sync.Once
}

func (t *turn) pass() { t.once.Do(func() { close(t.mine) }) }

// takeTurn gives req the next place in the order, on the reading
// goroutine: the order the client sent in.
func (s *session) takeTurn(req *Request) {
	t := &turn{mine: make(chan struct{})}
	s.mu.Lock()
	t.prev, s.lastTurn = s.lastTurn, t.mine
	s.mu.Unlock()
	req.turn = t
}

// backgroundOf is what src's immediate answer to req, once written,
// leaves going (Backgrounder), if anything.
func backgroundOf(src Preparer, req *Request) func(context.Context, Peer) {
	if b, ok := src.(Backgrounder); ok {
		return b.Background(req)
	}
	return nil
}

// whyUnmatched is what src says of why its immediate answer pr to req
// had none (Explainer), when the answer says it had none; "" otherwise.
// Asked at once, as req is the request src prepared, whatever waits.
func whyUnmatched(src Preparer, req *Request, pr *Prepared) string {
	if e, ok := src.(Explainer); ok && pr.Play == nil && pr.Reply.Unmatched {
		return e.WhyUnmatched(req)
	}
	return ""
}

// background starts work, if any, with a peer that holds req as it
// waits: the work (a task's answer) may take long.
func (s *session) background(work func(context.Context, Peer), req *Request, ex exchange) {
	if work != nil {
		go work(s.ctx, &peer{s: s, ex: ex, req: req.Waiting()})
	}
}

// waitingFor is req as it waits for pr's answer: Request.Waiting,
// unless pr's Play reads all of it.
func waitingFor(pr *Prepared, req *Request) *Request {
	if pr.WholeRequest {
		return req
	}
	return req.Waiting()
}

// play writes the answer pr prepared for req, once played; why is its
// source's word on an immediate answer that had none (whyUnmatched).
func (s *session) play(ctx context.Context, pr *Prepared, req *Request, ex exchange, why string) {
	r := pr.Reply
	if pr.Play != nil {
		r = pr.Play(ctx, &peer{s: s, ex: ex, req: req}, req)
		if !r.NoReply && ctx.Err() != nil && s.ctx.Err() != nil {
			// A Play that waited on ctx alone, not through Sleep: its
			// answer comes too late, as the session ended meanwhile.
			waitStateOf(ctx).giveUp(endedWhy)
		}
	}
	s.finish(ctx, req, ex, r, pr.SSE, why)
}

// answerFrom asks sources in turn, on a goroutine of its own.
func (s *session) answerFrom(ctx context.Context, srcs []SessionSource, req *Request, ex exchange) {
	pe := &peer{s: s, ex: ex, req: req}
	for _, src := range srcs {
		if p, ok := src.(Preparer); ok {
			pr, ok := p.Prepare(req)
			if !ok {
				continue
			}
			var work func(context.Context, Peer)
			if pr.Play == nil {
				work = backgroundOf(p, req)
			}
			why := whyUnmatched(p, req, pr)
			waiting := waitingFor(pr, req)
			s.play(ctx, pr, waiting, ex, why)
			s.background(work, waiting, ex)
			return
		}
		if r, ok := src.Answer(ctx, pe, req); ok {
			s.finish(ctx, req, ex, r, false, "")
			return
		}
	}
	s.unmatched(ctx, req, ex)
}

// finish writes a source's reply and what follows it. why, if not "", is
// what the source said of a reply marked Unmatched (Explainer), for the
// report, rather than what the reply itself says.
func (s *session) finish(ctx context.Context, req *Request, ex exchange, r Reply, sse bool, why string) {
	if why := gaveUp(ctx); why != "" {
		s.srv.interrupt(req, why)
		ex.done()
		return
	}
	if r.Unmatched {
		s.srv.answeredUnmatched(req, r, why)
	} else {
		s.srv.countMatched()
	}
	if r.Error != nil && r.Error.unmatched != nil {
		u := r.Error.unmatched
		s.srv.addUnmatched(*u)
		s.srv.warnf("unmatched %s (built from the client's input)\n  nearest: %s\n  %s", describe(u.Method, u.Params), u.Nearest, indent(u.Diff))
	}
	if r.NoReply {
		if r.CloseAfter { // "close": drop the connection unanswered
			if d, ok := ex.(dropper); ok && d.drop() {
				ex.done() // over HTTP, the POST's connection: the session lives on
				return
			}
			if s.hangup != nil {
				ex.done()
				s.hangup()
				return
			}
		}
		select { // a hung call: until cancelled or the session ends
		case <-ctx.Done():
		case <-s.draining:
		}
		ex.done()
		return
	}
	if ctx.Err() != nil {
		ex.done() // cancelled: no answer
		return
	}
	if r.refuses() {
		s.refuse(req, ex, r)
		return
	}
	switch {
	case len(r.Raw) == 1:
		_ = ex.reply(r.Raw[0], sse) // over HTTP: the body, as a reply would be
	case len(r.Raw) > 0:
		for _, f := range r.Raw {
			_ = ex.send(f)
		}
	case r.Error != nil && r.HTTPStatus != 0:
		msg := errorMessage(req.ID, r.Error)
		if ex.refuse(int(r.HTTPStatus), false, errorRefusal(r.Refusal, msg)) != nil {
			_ = ex.reply(msg, sse) // no status to give: the error as any
		}
	case r.Error != nil:
		_ = ex.reply(errorMessage(req.ID, r.Error), sse)
	default:
		if req.Method == "initialize" {
			s.initialized(req, r.Result)
		}
		s.noteSubscription(req)
		_ = ex.reply(resultMessage(req.ID, r.Result), sse)
	}
	ex.done()
	s.sendAfter(r.After, req)
	if r.CloseAfter && s.hangup != nil {
		s.hangup()
	}
}

// versionOf is the protocol version req speaks: its _meta's, else the
// one the session negotiated, else, in a session of sessionless HTTP
// requests, 2026-07-28 (its notifications need not say).
func (s *session) versionOf(req *Request) string {
	if v := req.MetaVersion(); v != "" {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version == "" && s.sessionless {
		return statelessVersion
	}
	return s.version
}

// initialized notes the negotiated version and warns when the recording
// answers another one than the client asked for.
func (s *session) initialized(req *Request, result json.RawMessage) {
	var asked struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	var got struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Logging   json.RawMessage `json:"logging"`
			Resources struct {
				Subscribe bool `json:"subscribe"`
			} `json:"resources"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(req.Params, &asked)
	_ = json.Unmarshal(result, &got)
	if got.ProtocolVersion < statelessVersion {
		s.srv.eras.Or(uint32(eraHandshake))
		for _, src := range s.srcs {
			if h, ok := src.(handshakeTold); ok {
				h.spokeHandshake()
			}
		}
	}
	s.mu.Lock()
	s.version = got.ProtocolVersion
	s.logging = len(got.Capabilities.Logging) > 0 && string(got.Capabilities.Logging) != "null"
	s.subscribes = got.Capabilities.Resources.Subscribe
	s.hello = append(json.RawMessage(nil), req.Params...)
	s.mu.Unlock()
	if asked.ProtocolVersion != "" && got.ProtocolVersion != "" && asked.ProtocolVersion != got.ProtocolVersion {
		s.srv.warnf("client asked for protocol version %s; mcpmock answers %s: its sources do not speak %s", asked.ProtocolVersion, got.ProtocolVersion, asked.ProtocolVersion)
	}
}

// sendAfter sends session-level messages, what the server sent after
// answering req; requests among them are sent with fresh ids and their
// replies awaited off this goroutine. Not to a 2026-07-28 client: that
// era has no server→client requests (SEP-2322 asks in results), so
// nothing outside a request may carry one, its subscriptions/listen
// streams included; nor to a client that did not declare the capability
// a request needs (withheld).
func (s *session) sendAfter(after []Outgoing, req *Request) {
	for _, o := range after {
		if o.Progress {
			if tok := req.ProgressToken(); tok != nil {
				_ = s.out(notificationMessage(o.Method, withMember(o.Params, "progressToken", tok)))
			}
			continue
		}
		if !o.Request {
			if !s.unsubscribed(o, req) {
				_ = s.out(notificationMessage(o.Method, o.Params))
			}
			continue
		}
		if s.withheld(req, o.Method, o.Params, "after "+req.Method) != nil {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_, _ = s.call(s.ctx, s.out, o.Method, o.Params)
		}()
	}
}

// cancelRequest cancels the request in flight with id (its JSON text,
// compared by value), as notifications/cancelled does (the HTTP client
// went away).
func (s *session) cancelRequest(id string) {
	s.mu.Lock()
	cancel := s.inflight[jsonrpc.CanonicalIDString(id)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
