package fallback

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// conn is one live connection to the real server. Messages the server
// sends arrive through the receive function it was started with, together
// with the id of the request they were sent in answer to when the
// transport tells (a POST's event stream), else "".
//
// send may be called from many goroutines at once; close once, last.
type conn interface {
	send(frame []byte) error
	// request sends a request of ours. params are the Mcp-Param-*
	// headers a 2026-07-28 tools/call carries over HTTP, read from the
	// frame's arguments; stdio has no headers. written, if not nil, is
	// called once the frame has gone out (over HTTP: before the answer).
	request(frame []byte, params []mcphttp.ParamHeader, written func()) error
	// abort cancels the request with our id id as the transport does
	// without notifications/cancelled, and says whether it could: HTTP
	// closes the request's response stream (2026-07-28), stdio cannot.
	abort(id string) bool
	// close ends the server session and says how it ended.
	close() store.EndInfo
}

// latestVersion is asked for when the live session has no version yet.
const latestVersion = "2025-11-25"

// upstream is one session with the real server, on behalf of one client
// session: requests go out with ids of its own, and what comes back is
// routed to the live request it belongs to.
type upstream struct {
	src   *Source
	conn  conn
	ready chan struct{} // closed once conn is set: a server may speak first
	rec   *sessionTap   // nil: not recording

	ctx    context.Context // ends when the session does
	cancel context.CancelFunc

	// gone closes when the server is gone on its own (a child that
	// exited); goneErr says how.
	gone     chan struct{}
	goneErr  error
	goneOnce sync.Once

	nextID atomic.Int64

	initMu  sync.Mutex // one handshake at a time
	inited  bool
	initErr error
	// clientHello: the handshake was the live client's own, whose
	// notifications/initialized is still to be passed on (once).
	// helloSent closes once it has been (or one of ours in its place):
	// requests wait for it. The engine's turns already bring a
	// notification the client sent before a request to the server first;
	// this is for the client whose notification comes late, or never.
	clientHello   atomic.Bool
	helloSent     chan struct{}
	helloSentOnce sync.Once
	// handshaking is set while mcpmock's own handshake is under way
	// (initialize): what the server notifies meanwhile answers that
	// handshake, not anything the live client did, and is not passed on.
	handshaking atomic.Bool
	// ownHandshake: the server session began with mcpmock's handshake,
	// not the live client's (upstream.unprompted).
	ownHandshake atomic.Bool
	// prompted: a notification of the client's (roots changed) went to
	// the server since the last server request made outside any call.
	prompted atomic.Bool

	mu      sync.Mutex
	pending map[string]*call // our request id → the live request
	// tools are what the server's tools/list answers said of each
	// tool's Mcp-Param-* headers, for the tools/call that follow.
	tools   mcphttp.ToolParams
	last    replay.Peer // the peer of the latest live request, for session-level traffic
	closing bool
	wg      sync.WaitGroup // goroutines of ours: sends, server requests

	closeOnce sync.Once
}

// call is a live request passed on to the server.
type call struct {
	peer  replay.Peer
	n     int64  // our id: the newest call is the likeliest to have caused what comes
	token string // its progressToken's JSON text, "" without
	done  chan answer
}

type answer struct {
	result json.RawMessage
	err    *replay.RPCError
	fail   error // no answer will come
}

// start begins a session with the real server. For a command it starts
// the process; for a URL nothing is sent until the first request.
func (s *Source) start() (*upstream, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errors.New("mcpmock is shutting down")
	}
	u := &upstream{src: s, ready: make(chan struct{}), gone: make(chan struct{}), pending: map[string]*call{}}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	var tap recorder.Tap = nopTap{}
	if s.w != nil {
		transport := store.TransportStdio
		switch {
		case s.opts.URL != nil && recorder.IsWebSocketURL(s.opts.URL):
			transport = store.TransportWebSocket
		case s.opts.URL != nil && recorder.IsLegacyURL(s.opts.URL):
			transport = store.TransportLegacySSE
		case s.opts.URL != nil:
			transport = store.TransportHTTP
		}
		u.rec = &sessionTap{src: s, info: store.SessionInfo{
			Name: cmp.Or(s.opts.SessionName, "fallback"), Transport: transport, Upstream: s.target, Start: time.Now(),
			Recorder: cmp.Or(s.opts.Recorder, "mcpmock/"+Version+" fallback"),
		}}
		tap = u.rec
	}
	var (
		c   conn
		err error
	)
	switch {
	case s.opts.URL != nil && recorder.IsWebSocketURL(s.opts.URL):
		c, err = startWS(s.opts, tap, u.receive, u.lost)
	case s.opts.URL != nil && recorder.IsLegacyURL(s.opts.URL):
		c, err = startLegacy(s.opts, tap, u.receive, u.lost)
	case s.opts.URL != nil:
		c = startHTTP(s.opts, tap, u.receive, u.fail, u.rec.becameLegacy, u.lost)
	default:
		c, err = startStdio(s.opts, tap, u.receive, u.lost)
	}
	if err != nil {
		u.cancel()
		u.endRecording(store.EndInfo{Reason: store.EndError, Error: err.Error()})
		s.mu.Lock()
		if s.startErr == nil {
			s.startErr = err
		}
		s.mu.Unlock()
		return nil, err
	}
	u.conn = c
	close(u.ready)
	s.mu.Lock()
	s.started = true
	s.open[u] = true
	s.wg.Add(1)
	s.mu.Unlock()
	return u, nil
}

// close ends the server session (once) and waits for what it started.
func (u *upstream) close() {
	u.closeOnce.Do(func() {
		u.mu.Lock()
		u.closing = true
		u.mu.Unlock()
		u.cancel() // server requests waiting on the live client stop
		end := u.conn.close()
		u.wg.Wait()
		u.endRecording(end)
		s := u.src
		s.mu.Lock()
		delete(s.open, u)
		s.mu.Unlock()
		s.wg.Done()
	})
}

// goroutine runs fn on a goroutine close waits for, unless closing.
func (u *upstream) goroutine(fn func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closing {
		return
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		fn()
	}()
}

// lost notes that the server is gone on its own: every request waiting
// for it, and every later one, fails with err.
func (u *upstream) lost(err error) {
	u.goneOnce.Do(func() {
		u.goneErr = err
		close(u.gone)
	})
}

// forward sends req to the server with an id of ours and waits for the
// answer, the server's end, or ctx; a cancelled ctx is passed on as
// notifications/cancelled. The error says why there is no answer.
// written, if not nil, is called once req has gone out.
func (u *upstream) forward(ctx context.Context, peer replay.Peer, req *replay.Request, written func()) (replay.Reply, error) {
	n := u.nextID.Add(1)
	key := strconv.FormatInt(n, 10)
	c := &call{peer: peer, n: n, token: string(req.ProgressToken()), done: make(chan answer, 1)}
	u.mu.Lock()
	u.pending[key] = c
	u.last = peer
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.pending, key)
		u.mu.Unlock()
	}()
	// The progressToken goes as the live client wrote it, so the server's
	// progress notifications already carry the live token.
	frame := request(n, req.Method, req.Params)
	params := u.paramHeaders(peer, req)
	failed := make(chan error, 1)
	u.goroutine(func() {
		if err := u.conn.request(frame, params, written); err != nil {
			failed <- err
		}
	})
	select {
	case a := <-c.done:
		if a.fail != nil {
			return replay.Reply{}, a.fail
		}
		if a.err != nil {
			return replay.Reply{Error: a.err}, nil
		}
		if req.Method == "tools/list" {
			u.learnTools(a.result)
		}
		return replay.Reply{Result: a.result}, nil
	case err := <-failed:
		return replay.Reply{}, err
	case <-u.gone:
		return replay.Reply{}, u.goneErr
	case <-ctx.Done():
		switch {
		case req.Method == "initialize": // which must not be cancelled
		case stateless(req) && u.conn.abort(key):
			// 2026-07-28 over HTTP: closing the request's stream cancels
			// it; a notifications/cancelled would reach a server that,
			// stateless, holds no request to cancel.
		default:
			params, _ := json.Marshal(map[string]any{"requestId": n, "reason": "the mcpmock client cancelled it"})
			_ = u.conn.send(notification("notifications/cancelled", params))
		}
		return replay.Reply{}, ctx.Err()
	}
}

// learnTools keeps what a tools/list answer says of each tool's
// Mcp-Param-* headers; a tool a conforming client would drop is forgotten.
func (u *upstream) learnTools(result json.RawMessage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.tools = u.tools.With(result)
}

// paramHeaders are the Mcp-Param-* headers a 2026-07-28 tools/call
// carries, as a client works them out: from the server's own tools/list
// answers this session passed on, else from the tools the recording (or
// script) lists, which the live client may have been answered from.
// Without either, none: the server then refuses a call that needs them,
// as it would refuse the client's.
func (u *upstream) paramHeaders(peer replay.Peer, req *replay.Request) []mcphttp.ParamHeader {
	if req.Method != "tools/call" || !stateless(req) {
		return nil
	}
	// Not json.Unmarshal: the arguments beside the name may be 64 MiB.
	name, _ := jsonrpc.String(jsonrpc.Member(req.Params, "name"))
	u.mu.Lock()
	ps, ok := u.tools[name]
	u.mu.Unlock()
	if ok {
		return ps
	}
	if ts, ok := peer.(replay.ToolSchemas); ok {
		if schema, ok := ts.InputSchema(name); ok {
			ps, _ = mcphttp.ParamHeaders(schema)
		}
	}
	return ps
}

// receive routes one message from the server. related is the id of ours
// that the message was sent in answer to, when the transport tells.
func (u *upstream) receive(frame []byte, related string) {
	sum := jsonrpc.Classify(frame)
	switch sum.Kind {
	case jsonrpc.Response, jsonrpc.Error:
		u.deliver(sum.ID, sum.Kind, frame)
	case jsonrpc.Request:
		u.goroutine(func() { u.serverRequest(frame, sum, related) })
	case jsonrpc.Notification:
		u.serverNotification(frame, sum, related)
	}
}

// deliver hands a response to the live request waiting for it. The
// result is handed on as the frame holds it, not copied: the frame is the
// one the transport read and tapped, which no one changes (recorder.Tap),
// and a 64 MiB result copied would be held twice.
func (u *upstream) deliver(id string, kind jsonrpc.Kind, frame []byte) {
	var a answer
	if kind == jsonrpc.Error {
		a.err = &replay.RPCError{}
		if err := json.Unmarshal(jsonrpc.Member(frame, "error"), a.err); err != nil {
			a.err = &replay.RPCError{Code: -32603, Message: "mcpmock: the fallback server's error does not parse: " + err.Error()}
		}
	} else {
		a.result = jsonrpc.Member(frame, "result")
	}
	u.settle(id, a)
}

// fail tells the request with our id that no answer will come.
func (u *upstream) fail(id string, err error) { u.settle(id, answer{fail: err}) }

func (u *upstream) settle(id string, a answer) {
	u.mu.Lock()
	c := u.pending[id]
	u.mu.Unlock()
	if c == nil {
		return // cancelled, or never ours
	}
	select {
	case c.done <- a:
	default: // it has its answer already
	}
}

// peerFor picks the live request a server message belongs to: the one it
// was sent in answer to, else the newest in flight, else the latest.
func (u *upstream) peerFor(related string) (p replay.Peer, inFlight bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c := u.pending[related]; c != nil {
		return c.peer, true
	}
	var newest *call
	for _, c := range u.pending {
		if newest == nil || c.n > newest.n {
			newest = c
		}
	}
	if newest != nil {
		return newest.peer, true
	}
	return u.last, false
}

// serverRequest asks the live client what the server asked (roots/list,
// sampling, elicitation) and sends its reply back.
func (u *upstream) serverRequest(frame []byte, sum jsonrpc.Summary, related string) {
	<-u.ready
	peer, inFlight := u.peerFor(related)
	var reply []byte
	switch {
	case peer == nil:
		reply = errorResponse(sum.ID, &replay.RPCError{Code: -32603, Message: "mcpmock: no live client to ask"})
		u.rec.notAsked(reply)
	case !inFlight && u.unprompted():
		u.src.notAsked(sum.Method)
		reply = errorResponse(sum.ID, &replay.RPCError{Code: -32603, Message: "mcpmock: not asked of the client: nothing it sent caused this " + sum.Method +
			" (no request of its was being answered), and its session with mcpmock began with mcpmock's own handshake"})
		u.rec.notAsked(reply) // a replay of the recording must not ask it either
	default:
		call := peer.Call
		if sc, ok := peer.(replay.SessionCaller); ok && !inFlight {
			// No request of the client's is being answered: over HTTP
			// the latest one's stream is closed, so ask on the session's.
			call = sc.CallSession
		}
		result, err := call(u.ctx, sum.Method, paramsOf(frame))
		var rpcErr *replay.RPCError
		switch {
		case errors.As(err, &rpcErr):
			reply = errorResponse(sum.ID, rpcErr)
		case err != nil:
			reply = errorResponse(sum.ID, &replay.RPCError{Code: -32603, Message: "mcpmock: the live client did not answer: " + err.Error()})
		default:
			reply = resultResponse(sum.ID, result)
		}
	}
	_ = u.conn.send(reply)
}

// unprompted says whether a server request made while no request of the
// live client's is being answered was caused by nothing the client sent
// the server, so that the client is not asked it. The live client's own
// handshake went to the server: what follows it is the client's (so
// asks server-everything for roots 350 ms after initialized). Else the
// handshake was mcpmock's, which the client did not cause; the client had
// its own answered from the recording, with what the recording asked
// after it. Only a notification of the client's passed on since (roots
// changed) may have caused it.
func (u *upstream) unprompted() bool {
	return u.ownHandshake.Load() && !u.prompted.Swap(false)
}

// serverNotification passes a server notification to the live client:
// progress to the request whose token it carries, what came in answer to a
// request to that request, the rest (list_changed, logging) to the session.
func (u *upstream) serverNotification(frame []byte, sum jsonrpc.Summary, related string) {
	if u.handshaking.Load() {
		u.src.heldBack(sum.Method)
		return
	}
	params := paramsOf(frame)
	if sum.Method == "notifications/progress" {
		u.mu.Lock()
		var to replay.Peer
		for _, c := range u.pending {
			if c.token != "" && c.token == sum.ProgressToken {
				to = c.peer
			}
		}
		u.mu.Unlock()
		if to != nil {
			_ = to.Notify(sum.Method, params)
		}
		return
	}
	if related != "" {
		if p, inFlight := u.peerFor(related); inFlight {
			_ = p.Notify(sum.Method, params)
			return
		}
	}
	if p, _ := u.peerFor(""); p != nil {
		_ = p.NotifySession(sum.Method, params)
	}
}

func paramsOf(frame []byte) json.RawMessage {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(frame, &m)
	return m.Params
}

// The messages the fallback writes to the server.

func request(id int64, method string, params json.RawMessage) []byte {
	return message(strconv.AppendInt(nil, id, 10), method, params)
}

func notification(method string, params json.RawMessage) []byte {
	return message(nil, method, params)
}

// message is a request (id not nil) or a notification, its params as the
// live client wrote them: json.Marshal would copy them twice (into its
// buffer, then out of it) and rewrite their <, > and &. Members in the
// order {jsonrpc, id, method, params}.
func message(id []byte, method string, params json.RawMessage) []byte {
	m, _ := json.Marshal(method)
	params = oneLine(params)
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":,"params":}`)+len(id)+len(m)+len(params))
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != nil {
		b = append(append(append(b, `"id":`...), id...), ',')
	}
	b = append(append(b, `"method":`...), m...)
	if len(params) > 0 {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, '}')
}

// oneLine makes params fit on one line of a stdio server's stdin: a
// client over HTTP may have sent them with line breaks, which in valid
// JSON are only white space between tokens (a string holds "\n", not
// the byte), so each becomes a space. Params without one are returned as
// they are, not copied.
func oneLine(params json.RawMessage) json.RawMessage {
	if bytes.IndexByte(params, '\n') < 0 {
		return params
	}
	return bytes.ReplaceAll(params, []byte{'\n'}, []byte{' '})
}

func resultResponse(id string, result json.RawMessage) []byte {
	if len(result) == 0 {
		result = json.RawMessage(`{}`)
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", json.RawMessage(id), result})
	if err != nil {
		return errorResponse(id, &replay.RPCError{Code: -32603, Message: "mcpmock: the live client's reply is not JSON"})
	}
	return b
}

func errorResponse(id string, e *replay.RPCError) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Error   *replay.RPCError `json:"error"`
	}{"2.0", json.RawMessage(id), e})
	return b
}
