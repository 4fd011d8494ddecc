package fallback

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
)

// session is the fallback's side of one client session: the server
// session it started, if any.
type session struct {
	src *Source

	mu      sync.Mutex
	up      *upstream
	failure error // the server could not be started: said again to every later request
	closed  bool
	// states are the requestStates of the input_required answers the
	// server gave in this session (mrtr.go).
	states map[string]bool
}

// declined are the methods the fallback leaves to the engine and the
// recording: the lifecycle (a 2026-07-28 client's server/discover that the
// recording lacks must fail, so that the client falls back to initialize
// as it did when recorded) and ping.
var declined = map[string]bool{"initialize": true, "server/discover": true, "ping": true}

// Answer implements replay.SessionSource.
func (ss *session) Answer(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, bool) {
	if req.ID == nil {
		return replay.Reply{}, ss.notify(ctx, peer, req)
	}
	if declined[req.Method] {
		return replay.Reply{}, false
	}
	if awaitTurn(ctx, peer) != nil {
		return replay.Reply{}, true // cancelled: no answer is written
	}
	up, err := ss.upstream()
	if err == nil && !stateless(req) {
		err = up.initialize(ctx, peer)
	}
	if err == nil {
		up.awaitInitialized(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return replay.Reply{}, true // cancelled: no answer is written
		}
		return ss.fail(req, err), true
	}
	if first := ss.staleRetry(req); first != nil {
		req = ss.freshState(ctx, peer, up, req, first)
	}
	r, err := up.forward(ctx, peer, req, passed(peer))
	switch {
	case ctx.Err() != nil:
	case err != nil:
		return ss.fail(req, err), true
	default:
		ss.src.countAnswered()
		if jsonrpc.MayAskForInput(req.Method) && r.Result != nil {
			ss.noteState(r.Result)
		}
	}
	return r, true
}

// LiveHandshake implements replay.LiveHandshaker. With nothing recorded to
// answer initialize or server/discover (the cassette is empty, or there is
// none), the live client's own goes to the server, as it is: the client
// meets the server's real era, version, capabilities and serverInfo, and
// the session recorded starts with the client's real handshake, ready to
// replay. A server of the handshake era refuses server/discover, and the
// client goes on to initialize, as it would without mcpmock.
func (ss *session) LiveHandshake(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, bool) {
	if awaitTurn(ctx, peer) != nil {
		return replay.Reply{}, true
	}
	up, err := ss.upstream()
	var r replay.Reply
	if err == nil {
		if req.Method == "server/discover" {
			r, err = up.forwardFirst(ctx, peer, req)
		} else {
			r, err = up.liveInitialize(ctx, peer, req)
		}
	}
	switch {
	case ctx.Err() != nil:
		return replay.Reply{}, true // cancelled: no answer is written
	case err != nil:
		return ss.fail(req, err), true
	}
	ss.src.countAnswered()
	return r, true
}

// notify passes on the client notifications that mean something to a
// server that is running: roots changed, and notifications/initialized
// after the client's own initialize went to it (LiveHandshake). Cancellations never get here (the
// engine turns them into a cancelled ctx, which forward passes on).
func (ss *session) notify(ctx context.Context, peer replay.Peer, req *replay.Request) bool {
	if awaitTurn(ctx, peer) != nil {
		return true
	}
	ss.mu.Lock()
	up := ss.up
	ss.mu.Unlock()
	if up == nil {
		return false
	}
	switch req.Method {
	case "notifications/roots/list_changed":
		up.prompted.Store(true) // the server may ask for the roots again
		_ = up.conn.send(notification(req.Method, req.Params))
		return true
	case "notifications/initialized":
		return up.passInitialized(req.Params)
	}
	return false
}

// awaitTurn waits until the messages the client sent before this one have
// gone to the server (replay.Sequencer), so that it gets them in the
// client's order.
func awaitTurn(ctx context.Context, peer replay.Peer) error {
	if sq, ok := peer.(replay.Sequencer); ok {
		return sq.AwaitTurn(ctx)
	}
	return nil
}

// passed is what tells the engine the client's message has gone out, so
// that the next may follow; nil when the engine does not order them.
func passed(peer replay.Peer) func() {
	if sq, ok := peer.(replay.Sequencer); ok {
		return sq.Passed
	}
	return nil
}

// upstream returns the session's server session, starting it the first
// time. A server that could not be started is not tried again in this
// session: each later request gets the same error at once.
func (ss *session) upstream() (*upstream, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.up != nil:
		return ss.up, nil
	case ss.failure != nil:
		return nil, ss.failure
	case ss.closed:
		return nil, errors.New("the session has ended")
	}
	up, err := ss.src.start()
	if err != nil {
		ss.failure = err
		return nil, err
	}
	ss.up = up
	return up, nil
}

// Close implements replay.SessionCloser: the client session is over.
func (ss *session) Close() {
	ss.mu.Lock()
	ss.closed = true
	up := ss.up
	ss.mu.Unlock()
	if up != nil {
		up.close()
	}
}

// stateless says whether req is of the 2026-07-28 era: its _meta carries
// the protocol version, so it needs no handshake and goes as it is.
func stateless(req *replay.Request) bool { return req.MetaVersion() != "" }

// fail counts and reports a request the server did not answer, and
// returns what the client gets for it.
func (ss *session) fail(req *replay.Request, err error) replay.Reply {
	ss.src.addFailed(req, err.Error())
	if r, ok := refusalReply(err); ok {
		ss.src.warnf("%s: %v (the client gets that status)", describe(req), err)
		return r
	}
	ss.src.warnf("%s: %v", describe(req), err)
	return failReply(req, ss.src.target, err)
}

// refusalReply passes on a bare 4xx or 5xx the server answered a request
// with: the client meets the status it would have met without mcpmock (a
// gateway's 429 or 503, which clients take as transient; a 401 whose
// WWW-Authenticate starts their authorization), with the headers a client
// acts on and the body, as a replay of a recorded refusal gives them; and
// a 404 for the server's session as the expiry of its own, after which it
// starts a new session, and so a new one with the server. A redirect is
// not followed or passed on: failReply says what it was.
func refusalReply(err error) (replay.Reply, bool) {
	var refused *recorder.Refusal
	if !errors.As(err, &refused) || refused.Status < 400 || refused.Status > 599 {
		return replay.Reply{}, false
	}
	return replay.RefusalReply(refused.Status, refused.SessionGone, refused.Header, refused.Body), true
}

// failReply is the answer to a request the real server could not be asked
// or did not answer: what was tried and what failed.
func failReply(req *replay.Request, target string, err error) replay.Reply {
	return replay.Reply{Error: &replay.RPCError{
		Code:    -32603,
		Message: fmt.Sprintf("mcpmock: nothing recorded answers %s, and the fallback server %s could not: %v", req.Method, target, err),
	}}
}
