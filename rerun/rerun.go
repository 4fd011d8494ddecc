// Package rerun drives a real MCP server with the client side of a
// recorded session (what mitmproxy calls client replay) and records what
// the server does now, so that the new session can be set beside the
// recording with replay.CompareSessions. A server developer records a host
// once, changes the server, and reruns the recording to see which answers
// changed.
//
// The recorded client frames are sent byte for byte, ids included (they
// were unique in the recording, so they are again), in recorded order.
// Where the recording shows the client waiting (an answer that arrived
// before the client's next frame) the rerun waits too, at most
// Options.Timeout. Server→client requests get the reply the recorded client
// gave to the same method, in order. It never re-encodes a frame it sends,
// and never sends a recorded answer of the server. Two values are not sent
// as recorded: a 2026-07-28 retry's requestState and the task id of a
// tasks/* request, which are the live server's to give (echoed.go).
package rerun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// Options says which server to run the recording against, and how.
type Options struct {
	// Command is a stdio server: program and arguments. Or:
	Command []string
	// URL is a Streamable HTTP endpoint, a legacy HTTP+SSE one (the
	// 2024-11-05 transport: a path ending in /sse, or found out as the
	// spec says, by a 4xx to the POST of initialize and a GET that opens
	// the legacy event stream), or a WebSocket (ws://, wss://;
	// subprotocol "mcp"). Its user info (https://user:password@host/mcp)
	// is sent as a Basic Authorization header, unless Header has one.
	URL *url.URL
	// Header is added to every HTTP request: the credentials a recording
	// keeps redacted.
	Header http.Header
	// HTTPClient reaches URL. Default: a client without automatic gzip.
	HTTPClient *http.Client
	// Timeout bounds each wait for an answer the recording got. Default
	// 10 s.
	Timeout time.Duration
	// Stderr receives a stdio server's stderr. Default: discarded.
	Stderr io.Writer
	// Grace is how long each step of a stdio server's shutdown waits.
	// Default 5 s.
	Grace time.Duration
	// Redactor hides secrets in what Result.Session keeps (mcpspy rerun
	// -o writes it to a cassette): the upstream (URL or command line),
	// the request paths, the response headers. Nil: what the recorders
	// hide by default.
	Redactor *recorder.HTTPRedactor
	// NoRedact keeps those as they are, secrets and all (record
	// --no-redact); Redactor is then not used.
	NoRedact bool
}

// Result is what happened in the rerun.
type Result struct {
	// Session holds every frame sent and received, as a recorder would
	// have kept them (seq in the order the rerun saw them).
	Session store.TapeSession
	// Unanswered says, one line each, which requests got no answer: those
	// the recording has an answer to that got none within Timeout, and any
	// the server refused with an HTTP error that carried no JSON-RPC
	// message ("tools/call (id 2): HTTP 404: …") unless the recording has
	// the same refusal (the same status), and those whose SSE
	// answer stream ended early and could not be resumed. When the rerun
	// stopped early (Run's error: the server went away), the requests it
	// sent that had no answer by then, and those it never sent, are here
	// too: the recording has an answer to each.
	Unanswered []string
	// Unheard says, one line a method, which server notifications the
	// recording has more of than the rerun ("notifications/tools/list_changed:
	// 1 in the recording, 0 in the rerun"): RunClient, which waits for
	// them, for every method; Run for the progress of each request
	// answered ("notifications/progress for tools/call (id 6): 3 in the
	// recording, 0 in the rerun"), which comes before the answer.
	Unheard []string
	// Malformed says, one line each, what the server sent in the rerun
	// that is no JSON-RPC message ("seq 1: invalid JSON: \"starting
	// v2\""), past as many as the recording has of them: a server that
	// now writes a log line to stdout breaks real clients, yet answers
	// every request. A refusal's body, told in Unanswered, is not one.
	Malformed []string
	// Notes says, one line each, what the rerun could not do as the
	// recorded client did and that may explain a changed answer: a
	// Mcp-Param-* header whose recorded value was redacted, a GET stream
	// that broke and could not be resumed.
	Notes []string
}

// Run sends the client side of recorded to the server opts names and
// returns the new session. It returns an error when the server cannot be
// started or reached at all; a server that answers differently, or not at
// all, is the Result's to tell. A server that goes away partway is an
// error too, returned with the Result of what was done until then.
func Run(ctx context.Context, recorded *store.TapeSession, opts Options) (*Result, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	d, err := start(ctx, recorded, opts, nil, 0)
	if err != nil {
		return nil, err
	}
	runErr := d.run(ctx, opts.Timeout)
	res := d.finish()
	res.Unheard = progressUnheard(recorded, &res.Session)
	return res, runErr
}

// progressUnheard names the requests the rerun got an answer to with
// fewer progress notifications before it than the recording has: a
// server that stopped reporting progress still answers the same. The
// rerun sends each request as recorded, progressToken and all, and a
// server sends a request's progress before its answer (on stdio in
// order; over HTTP on the answer's own stream), so, unlike notifications
// of the server's own, they are all in once the answer is.
func progressUnheard(recorded, rerun *store.TapeSession) []string {
	was, order, what := progressCounts(recorded)
	now, _, _ := progressCounts(rerun)
	answered := map[string]bool{}
	for _, m := range rerun.Messages {
		if sum := jsonrpc.Classify(m.Frame); m.Dir == store.S2C && (sum.Kind == jsonrpc.Response || sum.Kind == jsonrpc.Error) {
			answered[jsonrpc.CanonicalIDString(sum.ID)] = true
		}
	}
	var out []string
	for _, token := range order {
		if w := what[token]; answered[w.ID] && now[token] < was[token] {
			out = append(out, fmt.Sprintf("notifications/progress for %s: %d in the recording, %d in the rerun", w.What, was[token], now[token]))
		}
	}
	return out
}

// progressCounts counts a session's progress notifications by token
// (jsonrpc.CanonicalID of it), and names the requests that set each
// token (the last of them), in the order the tokens were first sent.
func progressCounts(s *store.TapeSession) (counts map[string]int, order []string, by map[string]replay.CallProgress) {
	counts, by = map[string]int{}, map[string]replay.CallProgress{}
	for _, p := range replay.ProgressOf(s) {
		if _, seen := by[p.Token]; !seen {
			order = append(order, p.Token)
		}
		by[p.Token] = p
		counts[p.Token] += len(p.Params)
	}
	return counts, order, by
}

// start connects a driver for recorded to the server opts names; g, if
// not nil, orders its steps as connection conni of a group.
func start(ctx context.Context, recorded *store.TapeSession, opts Options, g *gate, conni int) (*driver, error) {
	plan := planOf(recorded)
	if g != nil {
		for i := range plan.steps {
			plan.steps[i].rank = g.ranks[conni][i]
		}
	}
	tape := newTape(transportOf(opts), upstreamOf(opts))
	d := &driver{gate: g, conni: conni, tape: tape, plan: plan, ready: make(chan struct{}), replyKick: make(chan struct{}, 1), answered: map[string]chan struct{}{}, sentAs: map[string]string{}, refusedAs: map[string]int{}, nextReply: map[string]int{},
		gave: map[string]echoes{}, recordedMalformed: len(replay.NotMessages(recorded, store.S2C))}
	for i := range d.live {
		d.live[i] = map[string][]byte{}
	}
	var (
		c   conn
		err error
	)
	if opts.URL != nil {
		// The tape names the URL as given (its password redacted); the
		// server gets its user info as Basic credentials, as record sends
		// them: the WebSocket dialer refuses a URL that has some.
		opts.URL, opts.Header = recorder.UpstreamCredentials(opts.URL, opts.Header)
	}
	switch {
	case len(opts.Command) > 0 && opts.URL != nil:
		return nil, errors.New("rerun: give a command or a URL, not both")
	case len(opts.Command) > 0:
		c, err = startStdio(ctx, opts, tape, d.receive)
	case opts.URL != nil && recorder.IsWebSocketURL(opts.URL):
		c, err = startWS(ctx, opts, tape, d.receive)
	case opts.URL != nil:
		c, err = startHTTP(opts, tape, d.receive, d.fail, d.note)
	default:
		return nil, errors.New("rerun: no server: give a command or a URL")
	}
	if err != nil {
		return nil, err
	}
	d.conn = c
	close(d.ready)
	return d, nil
}

// finish closes the driver's connection and returns what it did.
func (d *driver) finish() *Result {
	end := d.conn.close() // after it, no answer is on its way
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noteCut()
	res := &Result{Session: d.tape.session(end), Unanswered: d.unanswered, Notes: d.notes}
	if now := replay.NotMessages(&res.Session, store.S2C); len(now) > d.recordedMalformed {
		res.Malformed = now[d.recordedMalformed:]
	}
	return res
}

// step is one recorded client frame to send.
type step struct {
	index int    // in the recording
	frame []byte // as recorded
	id    string // a request's id (jsonrpc.CanonicalID, as its answer is found by); "" for anything else
	// answeredAt is the index of the request's recorded answer; -1 when
	// it got none (a hung or cancelled call).
	answeredAt int
	what       string // method and id, for messages
	// repliesBefore counts the recorded client's replies to server
	// requests before this frame: the rerun sends it once it has given
	// as many (a call that needs the roots the server asked for first).
	repliesBefore int
	// tools is what the recording's tools/list answers had said by this
	// frame, and header the HTTP request header it was recorded with
	// (nil over stdio): where a 2026-07-28 tools/call's Mcp-Param-*
	// headers come from when the live server has listed no such tool.
	tools  toolSchemas
	header http.Header
	// gave is what the recorded answer gave that later requests echo (a
	// requestState, a task id), and echoes what the frame itself echoes
	// (echoed.go).
	gave, echoes echoes
	// rank is the step's place among the events of a group of
	// connections (RunClient); 0 alone.
	rank int
	// refused is the HTTP status (300 or more) the recorded request was
	// refused with, without a JSON-RPC answer; 0 if it was not.
	refused int
}

// plan is the recording taken apart: what to send, in order, and what the
// recorded client replied to the server's own requests.
type plan struct {
	steps   []step
	replies map[string][][]byte // method → reply bodies ("result":… or "error":…), in order
}

func planOf(s *store.TapeSession) *plan {
	p := &plan{replies: map[string][][]byte{}}
	serverAsked := map[string]string{} // server request id → method
	pending := map[string]int{}        // client request id → its step
	replied := 0                       // client replies to server requests so far
	listed := map[string]bool{}        // ids of the client's tools/list requests
	var tools toolSchemas
	for i, m := range s.Messages {
		sum := jsonrpc.Classify(m.Frame)
		// An answer may write its request's id another way ("\u0031"
		// for "1", 1.0 for 1): ids pair by value. What the step says
		// (describe) keeps the id as written.
		id := jsonrpc.CanonicalIDString(sum.ID)
		switch {
		case m.Dir == store.S2C && sum.Kind == jsonrpc.Request:
			serverAsked[id] = sum.Method
		case m.Dir == store.S2C && (sum.Kind == jsonrpc.Response || sum.Kind == jsonrpc.Error):
			if k, ok := pending[id]; ok {
				p.steps[k].answeredAt = i
				p.steps[k].gave = gaveOf(m.Frame)
				delete(pending, id)
			}
			if listed[id] {
				tools = tools.with(m.Frame)
				delete(listed, id)
			}
		case m.Dir == store.C2S && (sum.Kind == jsonrpc.Response || sum.Kind == jsonrpc.Error):
			// The recorded client's reply to a server request: kept to
			// answer the live server's, never sent as it stands.
			if method, ok := serverAsked[id]; ok {
				if body := replyBody(m.Frame); body != nil {
					p.replies[method] = append(p.replies[method], body)
				}
				replied++
			}
		case m.Dir == store.C2S:
			st := step{index: i, frame: m.Frame, answeredAt: -1, what: describe(sum), repliesBefore: replied, tools: tools}
			if m.HTTP != nil {
				st.header = m.HTTP.RequestHeader
				if m.HTTP.Status >= 300 && sum.Kind == jsonrpc.Request {
					st.refused = m.HTTP.Status
				}
			}
			if sum.Kind == jsonrpc.Request {
				st.id = id
				st.echoes = echoedBy(m.Frame)
				pending[id] = len(p.steps)
				if sum.Method == "tools/list" {
					listed[id] = true
				}
			}
			p.steps = append(p.steps, st)
		}
	}
	return p
}

// replyBody is the "result":… or "error":… member of a response, as
// written.
func replyBody(frame []byte) []byte {
	var out []byte
	jsonrpc.RawMembers(frame, func(key, value []byte) {
		if string(key) == `"result"` || string(key) == `"error"` {
			out = append(append(append([]byte(nil), key...), ':'), value...)
		}
	})
	return out
}

func describe(s jsonrpc.Summary) string {
	switch {
	case s.Method != "" && s.ID != "":
		return fmt.Sprintf("%s (id %s)", s.Method, s.ID)
	case s.Method != "":
		return s.Method
	}
	return s.Kind.String()
}

// conn is one live connection to the server under test. send may be
// called from the driver and from receive (a reply to a server request);
// implementations serialise it. st is the recorded step the frame is, nil
// for the rerun's own replies.
type conn interface {
	send(frame []byte, st *step) error
	// close ends the session and says how it ended.
	close() store.EndInfo
}

// ender is a conn whose server can go away on its own, a stdio server
// that exits: ended is closed then, once all it printed is received, and
// no wait for an answer outlasts it. Without it, a server that exited at
// once held the rerun for the whole --timeout before it said so.
type ender interface{ ended() <-chan struct{} }

// gone is closed when the server has gone away; nil (never) for a
// connection that cannot tell.
func (d *driver) gone() <-chan struct{} {
	if e, ok := d.conn.(ender); ok {
		return e.ended()
	}
	return nil
}

// driver sends the plan and watches what comes back.
type driver struct {
	conn  conn
	ready chan struct{} // closed once conn is set: a server may speak first
	// gate orders the driver's steps among those of the other
	// connections of its client (RunClient), as conni; nil alone.
	gate  *gate
	conni int
	tape  *tape
	plan  *plan

	mu      sync.Mutex
	replied int // replies given to live server requests
	// repliesWaived counts the replies the recording gave that the live
	// server never asked for: waited for once, then no more.
	repliesWaived int
	replyKick     chan struct{}            // signalled at each reply
	answered      map[string]chan struct{} // request id → closed at its live answer
	sentAs        map[string]string        // request id → method and id, for messages
	refusedAs     map[string]int           // request id → the HTTP status the recording refused it with
	nextReply     map[string]int
	// gave maps a request id to what its recorded answer gave that later
	// requests echo; live, for each kind, a recorded value to the one the
	// live server gave in its place (echoed.go).
	gave       map[string]echoes
	live       [len(echoedValues)]map[string][]byte
	unanswered []string
	notes      []string
	// cutOpen are the requests sent whose answers were not waited for
	// yet, and unsent the steps not sent, when the rerun stopped early.
	cutOpen, unsent []step
	// recordedMalformed counts the recording's server frames that are no
	// JSON-RPC message: a rerun with as many tells nothing new.
	recordedMalformed int
}

func (d *driver) run(ctx context.Context, timeout time.Duration) error {
	var open []step // sent requests whose answers have not been waited for
	// waitBefore waits for the answers the recording got before index i.
	waitBefore := func(i int) {
		kept := open[:0]
		for _, st := range open {
			if st.answeredAt < i {
				d.await(ctx, st, timeout)
			} else {
				kept = append(kept, st)
			}
		}
		open = kept
	}
	for i, st := range d.plan.steps {
		if err := ctx.Err(); err != nil {
			d.stepsDone(d.plan.steps[i:])
			return err
		}
		waitBefore(st.index)
		d.awaitReplies(ctx, st, timeout)
		d.gate.wait(ctx, st.rank, d.conni, timeout)
		if st.id != "" {
			d.mu.Lock()
			d.answered[st.id] = make(chan struct{})
			d.sentAs[st.id] = st.what
			if st.refused != 0 {
				d.refusedAs[st.id] = st.refused
			}
			if st.gave.any() {
				d.gave[st.id] = st.gave
			}
			d.mu.Unlock()
			if st.answeredAt >= 0 {
				open = append(open, st)
			}
		}
		err := d.conn.send(d.frameFor(&st), &st)
		if err != nil {
			d.mu.Lock()
			d.cutOpen = slices.DeleteFunc(open, func(o step) bool { return o.index == st.index })
			d.unsent = d.plan.steps[i:]
			d.mu.Unlock()
			d.stepsDone(d.plan.steps[i:]) // the other connections wait for them no more
			return fmt.Errorf("send %s: %w", st.what, err)
		}
		d.gate.sent(st.rank)
	}
	waitBefore(math.MaxInt) // every answer the recording got
	return ctx.Err()
}

// stepsDone tells the gate that steps will not be sent.
func (d *driver) stepsDone(steps []step) {
	if d.gate == nil {
		return
	}
	ranks := make([]int, len(steps))
	for i, st := range steps {
		ranks[i] = st.rank
	}
	d.gate.sent(ranks...)
}

// awaitReplies waits, at most timeout, until the rerun has replied to as
// many server requests as the recorded client had before st. A server
// that asks fewer questions now is waited for once per missing reply, not
// at every frame after it.
func (d *driver) awaitReplies(ctx context.Context, st step, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		d.mu.Lock()
		done := d.replied+d.repliesWaived >= st.repliesBefore
		d.mu.Unlock()
		if done {
			return
		}
		waive := func() {
			d.mu.Lock()
			d.repliesWaived = st.repliesBefore - d.replied
			d.mu.Unlock()
		}
		select {
		case <-d.replyKick:
		case <-t.C:
			waive()
			return
		case <-d.gone(): // it will ask nothing more
			waive()
			return
		case <-ctx.Done():
			return
		}
	}
}

// await waits for st's live answer, at most timeout.
func (d *driver) await(ctx context.Context, st step, timeout time.Duration) {
	d.mu.Lock()
	ch := d.answered[st.id]
	d.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-d.gone():
		select {
		case <-ch: // all the server printed is in: its answer may be too
		default:
			d.mu.Lock()
			d.unanswered = append(d.unanswered, st.what+": never answered: the server went away first")
			d.mu.Unlock()
		}
	case <-t.C:
		d.mu.Lock()
		d.unanswered = append(d.unanswered, fmt.Sprintf("%s: no answer within %s, though the recording has one", st.what, timeout))
		d.mu.Unlock()
	case <-ctx.Done():
	}
}

// noteCut adds to unanswered, when the rerun stopped early, the requests
// with a recorded answer that got none from the live server: those sent
// whose answer had not come by the end, and those never sent. Called with
// mu held, once the connection is closed.
func (d *driver) noteCut() {
	for _, st := range d.cutOpen {
		if _, waiting := d.answered[st.id]; waiting {
			d.unanswered = append(d.unanswered, st.what+": never answered: the rerun stopped first")
		}
	}
	for _, st := range d.unsent {
		if st.id != "" && st.answeredAt >= 0 {
			d.unanswered = append(d.unanswered, st.what+": never answered: not sent, the rerun stopped first")
		}
	}
}

// fail notes a request that will get no answer: one the server refused
// outside JSON-RPC (status: an HTTP error without a message), or whose
// stream ended for good (status 0). Nothing waits for it. A refusal with
// the status the recording has is what the recorded client got too, and
// is no news; another status, or a refusal the recording lacks, is.
func (d *driver) fail(id string, status int, reason string) {
	id = jsonrpc.CanonicalIDString(id)
	d.mu.Lock()
	defer d.mu.Unlock()
	ch, ok := d.answered[id]
	if !ok {
		return
	}
	close(ch)
	delete(d.answered, id)
	switch recorded := d.refusedAs[id]; {
	case status != 0 && status == recorded:
	case recorded != 0 && status != 0:
		d.unanswered = append(d.unanswered, fmt.Sprintf("%s: %s (the recording: HTTP %d)", d.sentAs[id], reason, recorded))
	default:
		d.unanswered = append(d.unanswered, fmt.Sprintf("%s: %s", d.sentAs[id], reason))
	}
}

// note keeps a line for Result.Notes.
func (d *driver) note(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.notes = append(d.notes, line)
}

// receive handles one frame from the server.
func (d *driver) receive(frame []byte) {
	sum := jsonrpc.Classify(frame)
	switch sum.Kind {
	case jsonrpc.Response, jsonrpc.Error:
		id := jsonrpc.CanonicalIDString(sum.ID) // the live server may write it another way
		d.mu.Lock()
		d.noteLive(id, frame)
		if ch, ok := d.answered[id]; ok {
			close(ch)
			delete(d.answered, id)
		}
		d.mu.Unlock()
	case jsonrpc.Notification:
		d.gate.heard(d.conni, sum.Method)
	case jsonrpc.Request:
		<-d.ready
		_ = d.conn.send(d.reply(sum.Method, sum.ID), nil)
		d.mu.Lock()
		d.replied++
		d.mu.Unlock()
		select {
		case d.replyKick <- struct{}{}:
		default:
		}
	}
}

// reply answers a server request as the recorded client did.
func (d *driver) reply(method, id string) []byte {
	var body []byte
	d.mu.Lock()
	if bodies := d.plan.replies[method]; len(bodies) > 0 {
		n := d.nextReply[method]
		body = bodies[min(n, len(bodies)-1)] // past the end: the last again
		d.nextReply[method] = n + 1
	}
	d.mu.Unlock()
	switch {
	case body != nil:
	case method == "ping":
		body = []byte(`"result":{}`)
	default:
		body = fmt.Appendf(nil, `"error":{"code":-32601,"message":%q}`, "mcpspy rerun: the recording has no client reply to "+method)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,`, id)
	b.Write(body)
	b.WriteByte('}')
	return b.Bytes()
}

func transportOf(o Options) string {
	switch {
	case o.URL != nil && recorder.IsWebSocketURL(o.URL):
		return store.TransportWebSocket
	case o.URL != nil && recorder.IsLegacyURL(o.URL):
		return store.TransportLegacySSE
	case o.URL != nil:
		return store.TransportHTTP
	}
	return store.TransportStdio
}

// secrets hides what the HTTP recorder hides by default in a URL: its
// password and the query parameters named like credentials (api_key,
// token, …). The rerun's session may be written to a cassette (mcpspy
// rerun -o), so it keeps what a recording keeps, no more.
var secrets = recorder.NewHTTPRedactor(nil)

// redactor is what o's session hides: nil (nothing) with NoRedact.
func (o Options) redactor() *recorder.HTTPRedactor {
	switch {
	case o.NoRedact:
		return nil
	case o.Redactor != nil:
		return o.Redactor
	}
	return secrets
}

func upstreamOf(o Options) string {
	if o.URL != nil {
		return o.redactor().URL(o.URL)
	}
	return o.redactor().CommandLine(o.Command)
}
