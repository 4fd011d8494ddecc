package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sync"
	"sync/atomic"
)

// The server's side of talking back to the client: the Peer a source
// answers through, server→client requests and their replies, and the
// 2026-07-28 listen streams that carry session-level messages over HTTP.

var (
	// errCallTimeout: the client did not answer a server→client request.
	errCallTimeout = errors.New("client did not answer in time")
	// errStatelessCall: a server→client request to a 2026-07-28 client,
	// which that era does not have, during a request or outside any.
	errStatelessCall = errors.New("a 2026-07-28 client takes no requests from the server")
)

// call sends a server→client request through send and waits for the reply.
func (s *session) call(ctx context.Context, send func([]byte) error, method string, params json.RawMessage) (json.RawMessage, error) {
	return s.callID(ctx, s.nextID.Add(1), send, method, params)
}

// callID is call with the request's id taken.
func (s *session) callID(ctx context.Context, id int64, send func([]byte) error, method string, params json.RawMessage) (json.RawMessage, error) {
	key := fmt.Sprint(id)
	ch := make(chan callReply, 1)
	s.mu.Lock()
	s.waiters[key] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiters, key)
		s.mu.Unlock()
	}()
	if err := send(requestMessage(id, method, params)); err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.srv.opts.CallTimeout)
	defer cancel()
	select {
	case r := <-ch:
		return r.unpack()
	case <-s.draining:
		return nil, errQueueClosed
	case <-ctx.Done():
		// No longer waiting: a reply from now on is a late one (see
		// session.response). One that came as the wait ran out counts.
		s.mu.Lock()
		delete(s.waiters, key)
		s.mu.Unlock()
		select {
		case r := <-ch:
			return r.unpack()
		default:
		}
		// Warn only when CallTimeout ran out: a caller with a shorter
		// deadline of its own (the progress barrier) says what it waited.
		if s.ctx.Err() == nil && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.srv.warnf("%s (id %d): %v after %s", method, id, errCallTimeout, s.srv.opts.CallTimeout)
			// The spec asks a sender that gives up on a request to say
			// so, and the client may stop asking its user.
			reason := fmt.Sprintf("mcpmock: no reply within %s (--call-timeout)", s.srv.opts.CallTimeout)
			params, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
			_ = send(notificationMessage("notifications/cancelled", params))
			return nil, errCallTimeout
		}
		return nil, ctx.Err()
	}
}

// peer is the Peer a source sees while answering one request.
type peer struct {
	s   *session
	ex  exchange
	req *Request
	mu  sync.Mutex // one exchange writer at a time
}

func (p *peer) send(msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ex.send(msg)
}

func (p *peer) Notify(method string, params json.RawMessage) error {
	return p.send(notificationMessage(method, params))
}

func (p *peer) NotifySession(method string, params json.RawMessage) error {
	return p.s.out(notificationMessage(method, params))
}

func (p *peer) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.callOn(ctx, p.send, "during", method, params)
}

func (p *peer) ProtocolVersion() string { return p.s.versionOf(p.req) }

// CallSession implements SessionCaller.
func (p *peer) CallSession(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.callOn(ctx, p.s.out, "after", method, params)
}

// callOn sends a server→client request through send, unless the client
// cannot take it (withheld: it is of 2026-07-28, which takes none, or it
// did not declare the capability the request needs; one would go
// unanswered, and the reply wait CallTimeout): then it is counted in the
// report, not sent. where places it for the report, during or after the
// request p answers.
func (p *peer) callOn(ctx context.Context, send func([]byte) error, where, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := p.s.withheld(p.req, method, params, where+" "+p.req.Method); err != nil {
		return nil, err
	}
	res, err := p.s.call(ctx, send, method, params)
	if err != nil {
		waitStateOf(ctx).noteEnd(ctx) // given up with the session, not by the client
	}
	return res, err
}

// AwaitTurn implements Sequencer.
func (p *peer) AwaitTurn(ctx context.Context) error {
	if p.req.turn == nil || p.req.turn.prev == nil {
		return nil
	}
	select {
	case <-p.req.turn.prev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Passed implements Sequencer.
func (p *peer) Passed() {
	if p.req.turn != nil {
		p.req.turn.pass()
	}
}

// ClientHello implements ClientHello.
func (p *peer) ClientHello() json.RawMessage {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return p.s.hello
}

// InputSchema implements ToolSchemas: a tool's inputSchema from the
// first source that lists it, for a source that passes a 2026-07-28
// tools/call on over HTTP (package fallback) and must send its
// Mcp-Param-* headers.
func (p *peer) InputSchema(tool string) (json.RawMessage, bool) {
	return p.s.srv.inputSchema(tool)
}

type nopExchange struct{}

func (nopExchange) send([]byte) error                    { return nil }
func (nopExchange) reply([]byte, bool) error             { return nil }
func (nopExchange) done()                                {}
func (nopExchange) refuse(int, bool, *HTTPRefusal) error { return errNoStatus }

// toListeners sends a session-level message on every open
// subscriptions/listen stream (2026-07-28 over HTTP, where there is no
// GET stream). With none ready, the message waits for the next one: the
// Go SDK client opens its listen stream without waiting, so it may arrive
// after what it should carry. name is the session's, for the report.
func (s *session) toListeners(name string, msg []byte) error {
	ready := func() []*lockedExchange { return readyOf(maps.Values(s.listeners), msg) }
	err := deliver(&s.mu, ready, &s.pendingListen, name, msg)
	if err != nil {
		s.srv.countUnheard([]string{name}, [][]byte{msg}, whyUnheard(err, unheardWhy))
	}
	return err
}

// endListen ends the session's wait for a listen stream and returns what
// waited in vain.
func (s *session) endListen() (from []string, msgs [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingListen.end()
}

// unheardWhy says why a session's messages for its listen streams were
// lost.
const unheardWhy = "it had no subscriptions/listen stream open before the session ended"

// errListenFull: maxQueued messages already wait for a listen stream.
var errListenFull = errors.New("too many messages wait for a listen stream")

// whyUnheard says why deliver lost a message: ended, the queue's owner's
// reason, or a full queue.
func whyUnheard(err error, ended string) string {
	if errors.Is(err, errListenFull) {
		return fmt.Sprintf("no subscriptions/listen stream was open, and %d messages already waited for one", maxQueued)
	}
	return ended
}

// countUnheard counts the messages that waited for a listen stream in
// vain, each under the session it came from.
func (s *Server) countUnheard(from []string, msgs [][]byte, why string) {
	for len(msgs) > 0 {
		n := 1
		for n < len(msgs) && from[n] == from[0] {
			n++
		}
		s.countUndelivered(from[0], "subscriptions/listen streams", why, msgs[:n])
		from, msgs = from[n:], msgs[n:]
	}
}

// deliver sends msg on the listen streams ready gives (called with mu
// held), or queues it in q when none is ready or every one it went to has
// closed. mu guards q. An error says msg is lost: q has ended
// (errQueueClosed), or is full (errListenFull).
func deliver(mu *sync.Mutex, ready func() []*lockedExchange, q *listenQueue, from string, msg []byte) error {
	mu.Lock()
	exs := ready()
	if len(exs) == 0 {
		defer mu.Unlock()
		return q.add(from, msg)
	}
	mu.Unlock()
	taken := false
	for _, l := range exs {
		if l.send(msg) == nil {
			taken = true
		}
	}
	if taken {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	return q.add(from, msg)
}

// readyOf picks the listen streams whose acknowledgement is out and
// that asked for msg.
func readyOf(listens iter.Seq[*lockedExchange], msg []byte) []*lockedExchange {
	var exs []*lockedExchange
	for l := range listens {
		if l.ready.Load() && l.filter.wants(msg) {
			exs = append(exs, l)
		}
	}
	return exs
}

// listenQueue holds session-level messages while no listen stream is
// ready for them; the next to become ready takes them all. Its owner's
// lock guards it.
type listenQueue struct {
	msgs  [][]byte
	from  []string // the session each came from: the hub's hold several
	ended bool     // its owner is gone, and no stream will take them
}

// add queues msg, unless the queue has ended or is full.
func (q *listenQueue) add(from string, msg []byte) error {
	switch {
	case q.ended:
		return errQueueClosed
	case len(q.msgs) >= maxQueued:
		return errListenFull
	}
	q.msgs = append(q.msgs, msg)
	q.from = append(q.from, from)
	return nil
}

// take takes the messages wants asks for (nil: all of them).
func (q *listenQueue) take(wants *listenFilter) [][]byte {
	if wants == nil {
		msgs := q.msgs
		q.msgs, q.from = nil, nil
		return msgs
	}
	var took [][]byte
	msgs, from := q.msgs[:0], q.from[:0]
	for i, m := range q.msgs {
		if wants.wants(m) {
			took = append(took, m)
			continue
		}
		msgs, from = append(msgs, m), append(from, q.from[i])
	}
	clear(q.msgs[len(msgs):])
	q.msgs, q.from = msgs, from
	return took
}

// end marks the queue ended and returns what it held.
func (q *listenQueue) end() (from []string, msgs [][]byte) {
	q.ended = true
	from, msgs = q.from, q.msgs
	q.msgs, q.from = nil, nil
	return from, msgs
}

// lockedExchange is a listen request's exchange: other requests'
// session-level messages share it with the listen's own messages, and
// those sent before any listen stream was ready wait in its owner's queue
// (a session's, or the sessionless clients' hub).
type lockedExchange struct {
	mu    sync.Mutex // one writer at a time
	ex    exchange
	ready atomic.Bool // its first message (the acknowledgement) is out
	// filter is what the listen request asked for; nil: everything.
	filter *listenFilter
	// queue is its owner's queue of messages waiting for a listen stream,
	// and queueMu the owner's lock that guards it.
	queue   *listenQueue
	queueMu *sync.Mutex
}

func (l *lockedExchange) send(m []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.ex.send(m)
	if err == nil && !l.ready.Load() {
		for _, p := range l.takeQueued() {
			_ = l.ex.send(p)
		}
	}
	return err
}

func (l *lockedExchange) reply(m []byte, sse bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ex.reply(m, sse)
}

func (l *lockedExchange) done() { l.ex.done() }

func (l *lockedExchange) refuse(status int, expire bool, more *HTTPRefusal) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ex.refuse(status, expire, more)
}

// takeQueued marks the exchange ready and takes its owner's queue, both
// under the lock that guards the queue, so no message falls between them.
func (l *lockedExchange) takeQueued() [][]byte {
	l.queueMu.Lock()
	defer l.queueMu.Unlock()
	l.ready.Store(true)
	return l.queue.take(l.filter)
}
