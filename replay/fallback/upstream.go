package fallback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// nopTap records nothing, when there is no cassette for new sessions.
type nopTap struct{}

func (nopTap) Append(store.Dir, time.Time, []byte, *store.HTTPMeta) uint64 { return 0 }

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
			Name: "fallback", Transport: transport, Upstream: s.target, Start: time.Now(), Recorder: "mcpmock/" + Version + " fallback",
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
		return nil, err
	}
	u.conn = c
	close(u.ready)
	s.mu.Lock()
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

func (u *upstream) endRecording(end store.EndInfo) {
	if u.rec != nil {
		u.rec.end(end)
	}
}

// sessionTap records into a new session of the cassette, created when the
// server first says something: a server that never answered (it did not
// start, or was not there) leaves no empty session behind.
type sessionTap struct {
	src  *Source
	info store.SessionInfo

	mu     sync.Mutex
	sess   *store.Session
	held   []*store.Message // what was sent before the server spoke
	failed bool
}

// Append implements recorder.Tap.
func (t *sessionTap) Append(dir store.Dir, at time.Time, frame []byte, meta *store.HTTPMeta) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil && !t.failed {
		if dir == store.C2S {
			t.held = append(t.held, &store.Message{Dir: dir, Time: at, Frame: frame, HTTP: meta})
			return 0
		}
		sess, err := t.src.w.NewSession(t.info)
		if err != nil {
			t.failed = true
			t.src.noteRecErr(err)
			t.src.warnf("this session is not recorded: %v", err)
			return 0
		}
		t.sess = sess
		for _, m := range t.held {
			sess.Append(m.Dir, m.Time, m.Frame, m.HTTP)
		}
		t.held = nil
	}
	if t.sess == nil {
		return 0
	}
	return t.sess.Append(dir, at, frame, meta)
}

// becameLegacy notes that the server at a URL turned out to speak the
// 2024-11-05 transport, before anything of the session is stored.
func (t *sessionTap) becameLegacy() {
	if t == nil {
		return // not recording
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.info.Transport = store.TransportLegacySSE
}

func (t *sessionTap) end(e store.EndInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return
	}
	if err := t.sess.End(e); err != nil {
		t.src.noteRecErr(err)
	}
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

// initialize performs the handshake once: the live session's protocol
// version, the live client's capabilities, and mcpmock as clientInfo.
func (u *upstream) initialize(ctx context.Context, peer replay.Peer) error {
	u.initMu.Lock()
	defer u.initMu.Unlock()
	if u.inited {
		return nil
	}
	if u.initErr != nil {
		return u.initErr
	}
	version := peer.ProtocolVersion()
	if version == "" {
		version = latestVersion
	}
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    clientCapabilities(peer),
		"clientInfo":      map[string]string{"name": "mcpmock", "version": Version},
	})
	hctx, cancel := context.WithTimeout(ctx, u.src.opts.StartTimeout)
	defer cancel()
	r, err := u.forward(hctx, peer, &replay.Request{Method: "initialize", Params: params}, nil)
	switch {
	case ctx.Err() != nil:
		return ctx.Err() // the client gave up: a later request tries again
	case hctx.Err() != nil:
		err = fmt.Errorf("no answer to initialize within %s", u.src.opts.StartTimeout)
	case err != nil:
		err = fmt.Errorf("initialize: %w", err)
	case r.Error != nil:
		err = fmt.Errorf("it refused initialize: %d %s", r.Error.Code, r.Error.Message)
	}
	if err != nil {
		u.initErr = err
		return err
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(r.Result, &res)
	if res.ProtocolVersion != "" && res.ProtocolVersion != version {
		u.src.warnf("the live session speaks %s; %s answered %s", version, u.src.target, res.ProtocolVersion)
	}
	if err := u.conn.send(notification("notifications/initialized", nil)); err != nil {
		u.initErr = fmt.Errorf("notifications/initialized: %w", err)
		return u.initErr
	}
	u.inited = true
	return nil
}

// liveInitialize passes the live client's own initialize to the server
// (replay.LiveHandshaker): the server's answer, a refusal included, is the
// client's. Once it succeeded the session needs no handshake of mcpmock's,
// and the client's notifications/initialized goes to the server.
func (u *upstream) liveInitialize(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, error) {
	u.initMu.Lock()
	defer u.initMu.Unlock()
	if u.initErr != nil {
		return replay.Reply{}, u.initErr
	}
	r, err := u.forwardFirst(ctx, peer, req)
	if err != nil || r.Error != nil || u.inited {
		return r, err
	}
	u.inited = true
	u.helloSent = make(chan struct{})
	u.clientHello.Store(true)
	return r, nil
}

// forwardFirst forwards a request that opens the live session (the live
// client's initialize or server/discover), bounded by StartTimeout: a
// server that does not answer it is not going to.
func (u *upstream) forwardFirst(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, error) {
	hctx, cancel := context.WithTimeout(ctx, u.src.opts.StartTimeout)
	defer cancel()
	r, err := u.forward(hctx, peer, req, passed(peer))
	switch {
	case ctx.Err() != nil:
		return replay.Reply{}, ctx.Err()
	case hctx.Err() != nil:
		return replay.Reply{}, fmt.Errorf("no answer to %s within %s", req.Method, u.src.opts.StartTimeout)
	}
	return r, err
}

// helloWait bounds how long a request waits for the client's
// notifications/initialized before the fallback sends one in its place (a
// client that never sends it, or whose notification an earlier source
// took).
const helloWait = 2 * time.Second

// passInitialized passes the client's notifications/initialized on, once,
// after a live handshake; it reports whether it did. A client that sends
// it before it has the answer to initialize waits here for that answer.
func (u *upstream) passInitialized(params json.RawMessage) bool {
	u.initMu.Lock()
	pending := u.clientHello.Swap(false)
	u.initMu.Unlock()
	if !pending {
		return false
	}
	_ = u.conn.send(notification("notifications/initialized", params))
	u.helloSentOnce.Do(func() { close(u.helloSent) })
	return true
}

// awaitInitialized holds a request until the client's
// notifications/initialized has gone to the server, after a live
// handshake; past helloWait it sends one itself.
func (u *upstream) awaitInitialized(ctx context.Context) {
	u.initMu.Lock()
	sent := u.helloSent
	u.initMu.Unlock()
	if sent == nil {
		return
	}
	t := time.NewTimer(helloWait)
	defer t.Stop()
	select {
	case <-sent:
	case <-ctx.Done():
	case <-t.C:
		u.passInitialized(nil)
	}
}

// clientCapabilities are those the live client declared in its
// initialize, so that the real server asks it what it would ask it (roots,
// sampling); none when it is not known.
func clientCapabilities(peer replay.Peer) json.RawMessage {
	h, ok := peer.(replay.ClientHello)
	if !ok {
		return json.RawMessage(`{}`)
	}
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(h.ClientHello(), &p) != nil || len(p.Capabilities) == 0 || p.Capabilities[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return p.Capabilities
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
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &p)
	u.mu.Lock()
	ps, ok := u.tools[p.Name]
	u.mu.Unlock()
	if ok {
		return ps
	}
	if ts, ok := peer.(replay.ToolSchemas); ok {
		if schema, ok := ts.InputSchema(p.Name); ok {
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
		u.deliver(sum.ID, frame)
	case jsonrpc.Request:
		u.goroutine(func() { u.serverRequest(frame, sum, related) })
	case jsonrpc.Notification:
		u.serverNotification(frame, sum, related)
	}
}

// deliver hands a response to the live request waiting for it.
func (u *upstream) deliver(id string, frame []byte) {
	var m struct {
		Result json.RawMessage  `json:"result"`
		Error  *replay.RPCError `json:"error"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		m.Error = &replay.RPCError{Code: -32603, Message: "mcpmock: the fallback server's answer does not parse: " + err.Error()}
	}
	u.settle(id, answer{result: m.Result, err: m.Error})
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
	if peer == nil {
		reply = errorResponse(sum.ID, &replay.RPCError{Code: -32603, Message: "mcpmock: no live client to ask"})
	} else {
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

// serverNotification passes a server notification to the live client:
// progress to the request whose token it carries, what came in answer to a
// request to that request, the rest (list_changed, logging) to the session.
func (u *upstream) serverNotification(frame []byte, sum jsonrpc.Summary, related string) {
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
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int64           `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", id, method, params})
	return b
}

func notification(method string, params json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", method, params})
	return b
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
