package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
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

// Why an exchange cannot refuse a request with an HTTP status: the
// session answers a JSON-RPC error that says so instead.
var (
	errNoStatus  = errors.New("this transport has no HTTP status")
	errStarted   = errors.New("the response had begun before the fault")
	errAccepted  = errors.New("the POST had been answered 202 Accepted before the fault")
	errNoSession = errors.New("2026-07-28 has no session to expire")
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
	// answers still being worked on are finished, but hung calls and
	// server→client requests stop waiting.
	draining  chan struct{}
	drainOnce sync.Once

	nextID atomic.Int64

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // request id → cancel
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
	waiters       map[string]chan callReply // our request id → reply
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
	errBatch   = &RPCError{Code: -32600, Message: "Invalid Request: batches are not supported"}
	errNotObj  = &RPCError{Code: -32600, Message: "Invalid Request: not a JSON-RPC object"}
	errVersion = &RPCError{Code: -32600, Message: `Invalid Request: jsonrpc must be "2.0"`}
	errID      = &RPCError{Code: -32600, Message: "Invalid Request: id must be a string or a number"}
	errShape   = &RPCError{Code: -32600, Message: "Invalid Request: neither a request, a notification nor a response"}
	errMethod  = &RPCError{Code: -32600, Message: "Invalid Request: method must be a string"}
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
	case !json.Valid(b):
		fail = errParse
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
	if string(id) == "null" {
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
	case len(w.Method) > 0 && id != nil:
		s.journal(id, method, w.Params)
		s.request(&Request{ID: id, Method: method, Params: w.Params, Frame: frame}, ex)
	case len(w.Method) > 0:
		s.journal(nil, method, w.Params)
		s.notification(&Request{Method: method, Params: w.Params, Frame: frame}, ex)
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

// response routes the client's reply to one of our requests.
func (s *session) response(id string, result, rpcErr json.RawMessage) {
	s.mu.Lock()
	ch := s.waiters[id]
	delete(s.waiters, id)
	late := ch == nil && s.barrierPings[id]
	if late { // the client answers ping, only slowly: wait for it again
		delete(s.barrierPings, id)
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
	ctx, cancel := context.WithCancel(s.ctx)
	idKey := string(req.ID)
	listen := req.Method == "subscriptions/listen"
	s.mu.Lock()
	s.inflight[idKey] = cancel
	if listen {
		l := &lockedExchange{ex: ex, queue: &s.pendingListen, queueMu: &s.mu}
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
		if pr.Play == nil && !pr.Reply.NoReply {
			s.finish(ctx, req, ex, pr.Reply, pr.SSE)
			end()
			s.background(p, req, ex)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer end()
			r := pr.Reply
			if pr.Play != nil {
				r = pr.Play(ctx, &peer{s: s, ex: ex, req: req}, req)
			}
			s.finish(ctx, req, ex, r, pr.SSE)
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

// background starts what src's immediate answer to req, written, left
// going (Backgrounder), if anything.
func (s *session) background(src Preparer, req *Request, ex exchange) {
	if b, ok := src.(Backgrounder); ok {
		if work := b.Background(req); work != nil {
			go work(s.ctx, &peer{s: s, ex: ex, req: req})
		}
	}
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
			r := pr.Reply
			if pr.Play != nil {
				r = pr.Play(ctx, pe, req)
			}
			s.finish(ctx, req, ex, r, pr.SSE)
			if pr.Play == nil {
				s.background(p, req, ex)
			}
			return
		}
		if r, ok := src.Answer(ctx, pe, req); ok {
			s.finish(ctx, req, ex, r, false)
			return
		}
	}
	s.unmatched(ctx, req, ex)
}

// finish writes a source's reply and what follows it.
func (s *session) finish(ctx context.Context, req *Request, ex exchange, r Reply, sse bool) {
	s.srv.countMatched()
	if r.Error != nil && r.Error.unmatched != nil {
		u := r.Error.unmatched
		s.srv.addUnmatched(*u)
		s.srv.warnf("unmatched %s (built from the client's input)\n  nearest: %s\n  %s", describe(u.Method, u.Params), u.Nearest, indent(u.Diff))
	}
	if r.NoReply {
		if r.CloseAfter && s.hangup != nil { // "close": drop the connection unanswered
			ex.done()
			s.hangup()
			return
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
		_ = ex.reply(resultMessage(req.ID, r.Result), sse)
	}
	ex.done()
	s.sendAfter(r.After, req)
	if r.CloseAfter && s.hangup != nil {
		s.hangup()
	}
}

// refuse carries out an HTTP status fault or an expired session. An
// expired session ends before its 404 goes out, so that whatever the
// client sends after reading it finds the session gone; where there is no
// 404 to give, the connection closes (stdio, WebSocket, a legacy POST
// already answered), or, with no connection to close (2026-07-28 over
// HTTP), the client gets the JSON-RPC error.
func (s *session) refuse(req *Request, ex exchange, r Reply) {
	status := r.refusalStatus()
	err := ex.refuse(status, r.ExpireSession, r.Refusal)
	if r.ExpireSession && (err == nil || s.hangup != nil) {
		if s.hangup != nil {
			s.hangup()
		}
		ex.done()
		return
	}
	if err != nil {
		_ = ex.reply(errorMessage(req.ID, statusError(status, r.ExpireSession, r.Refusal, err)), false)
	}
	ex.done()
}

// refuseNote gives a client notification's POST the refusal r holds, if
// any, in place of 202 Accepted. Where there is no status to give (stdio,
// WebSocket, a legacy POST already answered, 2026-07-28's missing
// session) nothing is sent: no answer is what a notification gets there.
// An expired session ends, as for a request.
func (s *session) refuseNote(ex exchange, r Reply) {
	if !r.refuses() {
		return
	}
	if err := ex.refuse(r.refusalStatus(), r.ExpireSession, r.Refusal); err == nil && r.ExpireSession && s.hangup != nil {
		s.hangup()
	}
}

// errorRefusal is the answer to a POST whose error goes with an HTTP
// status: msg, the error, as its application/json body, with the headers
// more gives (a 401's WWW-Authenticate); any body of more's is not sent.
func errorRefusal(more *HTTPRefusal, msg []byte) *HTTPRefusal {
	h := http.Header{}
	if more != nil && more.Header != nil {
		h = more.Header.Clone()
	}
	h.Set("Content-Type", "application/json")
	return &HTTPRefusal{Header: h, Body: msg}
}

// statusError is the JSON-RPC error that stands for an HTTP status the
// client cannot be given, and says why. Its data has the status, and the
// headers but Content-Type that would have come with it (a recording's
// are those a client acts on, such as Retry-After and WWW-Authenticate; a
// script's, those it gives), each as one value, as HTTP joins a list: a
// host on stdio can still learn when to come back.
func statusError(status int, expire bool, more *HTTPRefusal, why error) *RPCError {
	d := struct {
		HTTPStatus int               `json:"httpStatus"`
		Headers    map[string]string `json:"headers,omitempty"`
	}{HTTPStatus: status}
	if more != nil {
		for name, values := range more.Header {
			if len(values) > 0 && !strings.EqualFold(name, "Content-Type") {
				if d.Headers == nil {
					d.Headers = map[string]string{}
				}
				d.Headers[headerSpelling(name)] = strings.Join(values, ", ")
			}
		}
	}
	data, _ := json.Marshal(d)
	return &RPCError{Code: -32603, Data: data, Message: fmt.Sprintf("HTTP %d %s (fault %s; %v)", status, http.StatusText(status), faultName(status, expire), why)}
}

// headerSpelling writes a canonical header name (Go's: Www-Authenticate)
// as the specs and people spell it, for a reader matching names exactly.
func headerSpelling(name string) string {
	if name == "Www-Authenticate" {
		return "WWW-Authenticate"
	}
	return name
}

// faultName is the script fault that answers with status.
func faultName(status int, expire bool) string {
	if expire {
		return "expire-session"
	}
	return fmt.Sprintf("http-%d", status)
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
			Logging json.RawMessage `json:"logging"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(req.Params, &asked)
	_ = json.Unmarshal(result, &got)
	s.mu.Lock()
	s.version = got.ProtocolVersion
	s.logging = len(got.Capabilities.Logging) > 0 && string(got.Capabilities.Logging) != "null"
	s.hello = append(json.RawMessage(nil), req.Params...)
	s.mu.Unlock()
	if asked.ProtocolVersion != "" && got.ProtocolVersion != "" && asked.ProtocolVersion != got.ProtocolVersion {
		s.srv.warnf("client asked for protocol version %s; the recording answers %s", asked.ProtocolVersion, got.ProtocolVersion)
	}
}

// sendAfter sends session-level messages, what the server sent after
// answering req; requests among them are sent with fresh ids and their
// replies awaited off this goroutine. Not to a 2026-07-28 client: that
// era has no server→client requests (SEP-2322 asks in results), so
// nothing outside a request may carry one, its subscriptions/listen
// streams included.
func (s *session) sendAfter(after []Outgoing, req *Request) {
	for _, o := range after {
		if o.Progress {
			if tok := req.ProgressToken(); tok != nil {
				_ = s.out(notificationMessage(o.Method, withMember(o.Params, "progressToken", tok)))
			}
			continue
		}
		if !o.Request {
			_ = s.out(notificationMessage(o.Method, o.Params))
			continue
		}
		if v := s.versionOf(req); v >= statelessVersion {
			s.srv.skip(o.Method, o.Params, "after "+req.Method, v)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_, _ = s.call(s.ctx, s.out, o.Method, o.Params)
		}()
	}
}

// unmatched answers a request no source took.
func (s *session) unmatched(ctx context.Context, req *Request, ex exchange) {
	defer ex.done()
	if req.Method == "initialize" && (s.introduce(req, ex, false) || s.handshakeLive(ctx, req, ex) || s.introduce(req, ex, true)) {
		return
	}
	if req.Method == "server/discover" {
		// With nothing recorded, a live server (package fallback) says
		// which era it speaks. Else the recording is of the handshake
		// era: 2026-07-28 clients fall back to initialize, as they did
		// when it was made.
		if s.nothingRecorded() && s.handshakeLive(ctx, req, ex) {
			return
		}
		_ = ex.reply(errorMessage(req.ID, &RPCError{Code: -32601, Message: "Method not found: server/discover"}), false)
		return
	}
	if req.Method == "logging/setLevel" && s.answerSetLevel(req, ex) {
		return
	}
	canon, _ := canonParams(req.Method, req.Params)
	u := Unmatched{Method: req.Method, Params: shortened(canon)}
	for _, src := range s.srcs {
		if n, ok := src.(Nearer); ok {
			if near, diff, ok := n.Nearest(req); ok {
				u.Nearest, u.Diff = near, diff
				break
			}
		}
	}
	s.srv.addUnmatched(u)
	var e *RPCError
	if u.Nearest == "" {
		e = &RPCError{Code: -32601, Message: fmt.Sprintf("Method not found: %s (mcpmock: nothing recorded or scripted answers it)", req.Method)}
		s.srv.warnf("unmatched %s: no source knows this method", describe(req.Method, canon))
	} else {
		data, _ := json.Marshal(u)
		e = &RPCError{Code: -32602, Data: data, Message: fmt.Sprintf("mcpmock: no recorded answer for %s; nearest recorded request: %s\n%s", req.Method, u.Nearest, u.Diff)}
		s.srv.warnf("unmatched %s\n  nearest: %s\n  %s", describe(req.Method, canon), u.Nearest, indent(u.Diff))
	}
	_ = ex.reply(errorMessage(req.ID, e), false)
}

// answerSetLevel answers a logging/setLevel nothing recorded, when the
// server the client was introduced to declared logging: such a server
// answers it with an empty result, and some clients send it whatever they
// go on to do (the MCP Inspector's CLI sets "debug" as soon as it has
// connected, and gives up on an error), so a cassette recorded with
// another client could not be replayed to them. Recorded log messages
// are not made up: only a recorded setLevel brings those. A level the
// spec does not name gets -32602, as from a real server. Only after an
// initialize: 2026-07-28 deprecates logging (SEP-2577), and a client of
// that era declares nothing to set a level for.
func (s *session) answerSetLevel(req *Request, ex exchange) bool {
	s.mu.Lock()
	logging := s.logging
	s.mu.Unlock()
	if !logging {
		return false
	}
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(req.Params, &p) != nil || !slices.Contains(jsonrpc.LogLevels, p.Level) {
		_ = ex.reply(errorMessage(req.ID, &RPCError{Code: -32602, Message: fmt.Sprintf("logging/setLevel: level must be one of %s", strings.Join(jsonrpc.LogLevels, ", "))}), false)
		s.srv.countMatched()
		return true
	}
	if !s.srv.setLevelWarned.Swap(true) {
		s.srv.warnf("nothing recorded answers logging/setLevel; answering {} (the recorded server declared logging), and again for the rest of this run")
	}
	s.srv.countMatched()
	_ = ex.reply(resultMessage(req.ID, nil), false)
	return true
}

// introduce answers initialize from a source that recorded none (a
// cassette whose handshake was cut out), as the recorded server would have
// introduced itself.
func (s *session) introduce(req *Request, ex exchange, blankToo bool) bool {
	for _, src := range s.srcs {
		h, ok := src.(Handshaker)
		if !ok {
			continue
		}
		if b, ok := src.(interface{ blankIntroduction() bool }); ok && b.blankIntroduction() && !blankToo {
			continue
		}
		result, warning, ok := h.Handshake(req)
		if !ok {
			continue
		}
		if warning != "" {
			s.srv.warnf("%s", warning)
		}
		s.srv.countMatched()
		s.initialized(req, result)
		_ = ex.reply(resultMessage(req.ID, result), false)
		return true
	}
	return false
}

// nothingRecorded says whether no source has a recorded lifecycle to keep:
// every cassette is blank (about to be recorded from scratch), or there is
// none.
func (s *session) nothingRecorded() bool {
	for _, src := range s.srcs {
		if b, ok := src.(interface{ blankIntroduction() bool }); ok && !b.blankIntroduction() {
			return false
		}
	}
	return true
}

// handshakeLive lets a live server answer initialize or server/discover
// (package fallback) when no recording has anything to say about the
// handshake.
func (s *session) handshakeLive(ctx context.Context, req *Request, ex exchange) bool {
	for _, src := range s.srcs {
		if l, ok := src.(LiveHandshaker); ok {
			if r, ok := l.LiveHandshake(ctx, &peer{s: s, ex: ex, req: req}, req); ok {
				s.finish(ctx, req, ex, r, false)
				return true
			}
		}
	}
	return false
}

func indent(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte("\n  ")))
}

// cancelRequest cancels a request in flight, as notifications/cancelled
// does (the HTTP client went away).
func (s *session) cancelRequest(id string) {
	s.mu.Lock()
	cancel := s.inflight[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
