package replay

import (
	"context"
	"sync/atomic"
	"time"
)

// A call whose answer waits (a delay, the recorded timing, progress
// steps, a server→client request) is given up, not awaited, once nobody
// will read its answer: the client stopped sending (the end of stdin,
// which is how an MCP client shuts a stdio server down) or the session
// ended (SIGTERM). The report lists it apart (Report.Interrupted): the
// client never got the answer it was promised.

// waitKey keys a request's waitState in the context its answer is
// played with.
type waitKey struct{}

// waitState is what the waits of one request's answer share with the
// session: when to give up, and whether they did.
type waitState struct {
	s *session
	// why is set when a wait ended because the session ended or its
	// client stopped sending, and says which: the answer is then not
	// written (session.finish).
	why atomic.Pointer[string]
}

// withWaitState gives ctx, a request's context, the state Sleep and
// Peer.Call report to.
func (s *session) withWaitState(ctx context.Context) context.Context {
	return context.WithValue(ctx, waitKey{}, &waitState{s: s})
}

func waitStateOf(ctx context.Context) *waitState {
	w, _ := ctx.Value(waitKey{}).(*waitState)
	return w
}

// drained returns the channel that closes when w's session stops
// reading; nil (never) outside a session.
func (w *waitState) drained() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.s.draining
}

// noteEnd marks the answer given up when its session, not the request
// alone (notifications/cancelled, an HTTP client gone), has ended: a
// cancelled call is the client's doing, not an interruption.
func (w *waitState) noteEnd(ctx context.Context) {
	if w == nil || (ctx.Err() != nil && w.s.ctx.Err() == nil) {
		return
	}
	if why := w.s.stopWhy(); why != "" {
		w.giveUp(why)
	}
}

// giveUp marks the answer given up, for why, unless it already was.
func (w *waitState) giveUp(why string) {
	if w != nil {
		w.why.CompareAndSwap(nil, &why)
	}
}

// Sleep waits d, the time an answer takes (a delay, a pause between
// progress steps), as a source's Play should: it returns true once d
// has passed, false when ctx ends first or, over stdio, when the client
// closes its stdin. A client that hung up reads no answer, so its
// waits are given up rather than awaited, and the engine then writes
// none and reports the call interrupted. A d of 0 or less waits for
// nothing, even then: an answer that takes no time is still given, as
// to requests piped in from a file.
func Sleep(ctx context.Context, d time.Duration) bool {
	w := waitStateOf(ctx)
	if d <= 0 {
		if ctx.Err() != nil {
			w.noteEnd(ctx)
			return false
		}
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-w.drained():
	}
	w.noteEnd(ctx)
	return false
}

// sleepUntil is Sleep until t.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return Sleep(ctx, time.Until(t))
}

// gaveUp says why the answer to the request ctx is for was given up
// (Sleep, Peer.Call, a Play the session's end cut short), or "" if it
// was not. A hang (NoReply) that no wait marked got its answer; a
// source answering in its own way (the fallback) says for itself what
// it could not answer.
func gaveUp(ctx context.Context) string {
	if w := waitStateOf(ctx); w != nil {
		if why := w.why.Load(); why != nil {
			return *why
		}
	}
	return ""
}

// Why a call was given up, for the report.
const (
	endedWhy = "the session ended while it waited"
	stdinWhy = "the client closed stdin while it waited"
	// Over WebSocket and legacy HTTP+SSE the connection is the session:
	// a client that closes it has ended the session, as closing stdin
	// does, not cancelled one call, as dropping a Streamable HTTP POST
	// does. Said apart from endedWhy so that a test author can tell the
	// host that left mid-call from mcpmock stopped under it.
	wsGoneWhy  = "the client closed the WebSocket while it waited"
	sseGoneWhy = "the client closed its SSE stream while it waited"
)

// clientLeft says why the session is about to end, for the calls it
// gives up: its client closed the connection (wsGoneWhy, sseGoneWhy).
// Called before close; a session already ended keeps endedWhy.
func (s *session) clientLeft(why string) {
	if s.ctx.Err() == nil {
		s.leftWhy.CompareAndSwap(nil, &why)
	}
}

// stopWhy says, for the report, why the session gives up what waits,
// or "" while it does not.
func (s *session) stopWhy() string {
	if s.ctx.Err() != nil {
		if why := s.leftWhy.Load(); why != nil {
			return *why
		}
		return endedWhy
	}
	select {
	case <-s.draining:
		return stdinWhy
	default:
		return ""
	}
}

// interrupt counts a request given up unanswered (Report.Interrupted)
// and says so.
func (s *Server) interrupt(req *Request, why string) {
	in := Interrupted{Method: req.Method, Params: shortCanon(req.Method, req.Params), Why: why}
	s.mu.Lock()
	s.interrupted = append(s.interrupted, in)
	s.mu.Unlock()
	s.warnf("%s given up unanswered: %s", describe(in.Method, in.Params), why)
}
