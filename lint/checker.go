package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// checker walks one session's messages in seq order (the order mcpspy read
// them, which is causal), keeping what later messages are judged against:
// the requests in flight on each side, the negotiated version and
// capabilities, the tools listed.
type checker struct {
	info store.SessionInfo
	skip map[string]bool
	out  []Finding

	// sent[d] holds every request side d sent, by id (jsonrpc.CanonicalID,
	// so that "\u0031" and 1.0 find the requests of id "1" and 1, as
	// pairing in the inspector does); a request leaves pending[d] when
	// answered.
	sent    [2]map[string]*request
	pending [2]map[string]*request
	// tokens maps a progress token (jsonrpc.CanonicalID: a token is a
	// string or a number, compared as a value as an id is) to the request
	// that carried it, per side that sent the request.
	tokens [2]map[string]*request

	era        era
	version    string // negotiated (or per-request, stateless) protocol version
	clientCaps map[string]json.RawMessage
	serverCaps map[string]json.RawMessage
	// capsKnown says whether the handshake told each side's capabilities;
	// without it no capability is judged.
	clientCapsKnown, serverCapsKnown bool

	initRequest  *request // the initialize request, once seen
	initAnswered uint64   // seq of its successful answer
	// acceptReported: http-accept fired; a client that gets Accept wrong
	// gets it wrong on every POST, and one finding says so.
	acceptReported bool
	initialized    uint64 // seq of notifications/initialized
	// usedBeforeInitialized is the first client request (not ping) after
	// initialize was answered and before notifications/initialized.
	usedBeforeInitialized uint64
	// initializedEarly is the client's notifications/initialized when it
	// came before initialize was answered.
	initializedEarly uint64
	// early holds the client's requests (not ping) sent before initialize
	// was answered, judged at the end, once the era is known.
	early []*request

	tools       map[string]*tool // from tools/list results
	toolsListed bool
	// walks maps method+"\x00"+cursor to the pagination that handed the
	// cursor out.
	walks map[string]*walk
	// subscribed holds the resource URIs the client subscribed to.
	subscribed map[string]bool
	// listens maps a resource URI to the client's subscriptions/listen
	// requests that name it (2026-07-28).
	listens map[string][]*request
	// gone maps each Mcp-Session-Id the server answered 404 for to the
	// seq of that POST; a later POST with it is reported once
	// (goneReused).
	gone       map[string]uint64
	goneReused map[string]bool
	// asks holds the input_required results a retry may answer, by
	// askKey.
	asks map[string]*inputAsk
	// cassette, when the session is checked with the rest of its
	// cassette (Cassette, Tape), takes its asks and the retries no ask of
	// its own answers, for a retry sent on another connection than its
	// call.
	cassette *Cassette
	// tasks holds each task id's last status (tasks.go).
	tasks map[string]*taskState
	// taskForms holds the form of each elicitation the client runs as a
	// task, by task id, for the content its result gives (tasks.go).
	taskForms map[string]json.RawMessage
}

type era uint8

const (
	eraUnknown   era = iota
	eraHandshake     // initialize (2024-11-05 … 2025-11-25)
	eraStateless     // 2026-07-28: server/discover and per-request _meta
)

// request is one request either side sent, with what was learnt of it.
type request struct {
	seq    uint64
	dir    store.Dir
	id     string // as written, for findings
	method string
	// tool and task are a tools/call's params.name and whether it asked
	// for a task: what its answer is judged by. Nothing else of a
	// request's frame is kept, so a long session holds no frames.
	tool string
	task bool
	// target is what a tools/call, prompts/get or resources/read names
	// (the tool, prompt or resource), which its retries name too.
	target string
	// form is an elicitation/create's requestedSchema, which the reply's
	// content is judged by (elicit.go); nil for any other request.
	form     json.RawMessage
	answered uint64 // seq of the first answer
	// cancelled is the seq of a notifications/cancelled for it.
	cancelled uint64
	// refused: its POST got a 4xx or 5xx and no answer (http-status says
	// so), so no answer is owed.
	refused bool
	// left: the client closed the stream of its POST before the answer
	// came, which in 2026-07-28 cancels the request.
	left     bool
	progress *float64 // the last progress value seen for its token
	walk     *walk    // for a list method: the pagination it belongs to
}

// tool is what a tools/list result said about one tool.
type tool struct {
	outputSchema json.RawMessage
	taskSupport  string // execution.taskSupport, "" when absent
}

// frame is a message parsed for the checks. Members hold raw JSON.
type frame struct {
	seq    uint64
	at     time.Time
	dir    store.Dir
	http   *store.HTTPMeta
	kind   jsonrpc.Kind
	id     string // as written, which findings show
	key    string // id as requests are found by (idKey)
	method string
	params json.RawMessage
	result json.RawMessage
	// inputRequired: a result with resultType input_required (from the
	// classifier's one pass over the frame).
	inputRequired bool
	// left: the client left its POST before the answer (store.ClientLeft).
	left bool
	// notAsked: mcpmock's own answer to a server request its client was
	// not asked (notasked.go).
	notAsked bool
}

func newChecker(info store.SessionInfo, opts Options) *checker {
	c := &checker{info: info, skip: map[string]bool{}, tools: map[string]*tool{}, walks: map[string]*walk{}, subscribed: map[string]bool{}, listens: map[string][]*request{}, asks: map[string]*inputAsk{}}
	for _, name := range opts.Skip {
		c.skip[name] = true
	}
	for d := range 2 {
		c.sent[d] = map[string]*request{}
		c.pending[d] = map[string]*request{}
		c.tokens[d] = map[string]*request{}
	}
	c.seed()
	return c
}

// report adds a finding under rule, whose severity the rule table gives.
func (c *checker) report(rule string, seq, related uint64, format string, a ...any) {
	if f, ok := newFinding(c.info.ID, c.skip, rule, seq, related, format, a...); ok {
		c.out = append(c.out, f)
	}
}

// newFinding makes a finding about session under rule, whose severity
// the rule table gives; ok is false when skip names the rule.
func newFinding(session string, skip map[string]bool, rule string, seq, related uint64, format string, a ...any) (Finding, bool) {
	r, ok := rulesByName[rule]
	if !ok {
		panic("lint: unknown rule " + rule)
	}
	if skip[rule] {
		return Finding{}, false
	}
	return Finding{Session: session, Seq: seq, Related: related, Rule: rule, Severity: r.Severity, Message: fmt.Sprintf(format, a...)}, true
}

func (c *checker) message(m *store.Message) {
	s := jsonrpc.Classify(m.Frame)
	c.httpAnswer(m, s) // once per POST, a batch too
	if s.Kind == jsonrpc.Batch {
		c.batch(m)
		return
	}
	c.one(m, m.Frame, s)
}

// batch checks that batches are allowed, then each element as a message
// of the same seq.
func (c *checker) batch(m *store.Message) {
	if c.version != "" && c.version != "2025-03-26" {
		c.report("batch", m.Seq, 0, "a JSON-RPC batch in protocol %s; only 2025-03-26 allows them", c.version)
	}
	jsonrpc.Elements(m.Frame, func(el []byte) {
		c.one(m, el, jsonrpc.Classify(el))
	})
}

func (c *checker) one(m *store.Message, raw []byte, s jsonrpc.Summary) {
	if s.Kind == jsonrpc.Malformed {
		if !errorPage(m) && !endpointEvent(m) {
			c.report("malformed", m.Seq, 0, "not a JSON-RPC 2.0 message: %s", s.Reason)
		}
		return
	}
	f := &frame{seq: m.Seq, at: m.Time, dir: m.Dir, http: m.HTTP, kind: s.Kind, id: s.ID, key: idKey(s.ID), method: s.Method, inputRequired: s.InputRequired, left: store.ClientLeft(m.Note)}
	_, f.notAsked = notAsked(m)
	if s.Kind != jsonrpc.Error {
		f.params, f.result = member(raw, "params"), member(raw, "result")
	}
	// mcpmock's answer echoes the server's id, as it must: the server's
	// request has the finding.
	if jsonType(json.RawMessage(f.id)) == "number" && !f.notAsked { // an integer is "integer"
		c.report("id-not-integer", f.seq, 0, "id %s is not an integer; MCP ids are strings or integers", f.id)
	}
	switch f.kind {
	case jsonrpc.Request:
		c.request(f)
	case jsonrpc.Notification:
		c.notification(f)
	case jsonrpc.Response, jsonrpc.Error:
		c.response(f)
	}
	c.httpPost(f) // after the request, which may have told the era
}

// request records a request and runs the checks that need only it and
// what came before.
func (c *checker) request(f *frame) {
	r := &request{seq: f.seq, dir: f.dir, id: f.id, method: f.method}
	if status, _ := f.http.Refusal(); status != 0 && f.dir == store.C2S {
		r.refused = true
	}
	r.left = f.dir == store.C2S && f.left
	switch f.method {
	case "tools/call":
		r.tool, _ = stringOf(member(f.params, "name"))
		r.target = r.tool
	case "prompts/get":
		r.target, _ = stringOf(member(f.params, "name"))
	case "resources/read":
		r.target, _ = stringOf(member(f.params, "uri"))
	case "tasks/get", "tasks/result", "tasks/cancel":
		r.target, _ = stringOf(member(f.params, "taskId"))
	case "elicitation/create":
		r.form = bytes.Clone(member(f.params, "requestedSchema"))
	}
	if jsonrpc.TaskAugmentable(f.method) {
		r.task = member(f.params, "task") != nil
	}
	c.lifecycleRequest(f, r)
	switch first, ok := c.sent[f.dir][f.key]; {
	case !ok:
		c.sent[f.dir][f.key] = r
	case c.era == eraStateless:
		// 2026-07-28 has no sessions: each request stands alone, and a
		// client may number each from 1. (The recorder groups them by
		// connection.)
		c.sent[f.dir][f.key] = r
	default:
		c.report("id-reused", f.seq, first.seq, "%s reuses id %s, first used by %s at #%d", describe(f), f.id, first.method, first.seq)
	}
	c.pending[f.dir][f.key] = r
	if c.cassette != nil && f.dir == store.C2S && c.connectionShare() {
		c.cassette.sent(c, f.key, f.at)
	}
	if tok := progressToken(f.params); tok != "" {
		c.tokens[f.dir][tok] = r
	}
	c.capability(f)
	c.deprecated(f)
	c.paramsShape(f)
	c.logLevel(f)
	c.subscriptions(f, r)
	c.elicitationSchema(f)
	if f.dir == store.C2S {
		c.paginationRequest(f, r)
		c.toolCallRequest(f)
		c.taskCallRequest(f, r)
		c.inputResponses(f, r)
	} else {
		c.taskAskRequest(f, r)
	}
}

func (c *checker) notification(f *frame) {
	switch f.method {
	case "notifications/cancelled":
		c.cancelled(f)
	case "notifications/progress":
		c.progress(f)
	case "notifications/initialized":
		if f.dir == store.C2S && c.initialized == 0 {
			c.initialized = f.seq
			if c.initRequest != nil && c.initAnswered == 0 {
				c.initializedEarly = f.seq
			}
		}
	case "notifications/tasks/status":
		c.taskStatusNote(f)
	}
	c.capability(f)
	c.deprecated(f)
	c.paramsShape(f)
	c.logLevel(f)
	c.subscriptions(f, nil)
}

// response pairs an answer with its request, by the id and the opposite
// direction, never by position.
func (c *checker) response(f *frame) {
	if f.id == "" || f.id == "null" {
		return // an error about a frame whose id could not be read
	}
	asker := other(f.dir)
	r, ok := c.pending[asker][f.key]
	if !ok {
		if prev, sent := c.sent[asker][f.key]; sent && prev.answered != 0 {
			c.report("response-duplicate", f.seq, prev.answered, "a second answer to %s %s (first answered at #%d)", prev.method, f.id, prev.answered)
		} else {
			c.report("response-unknown-id", f.seq, 0, "answers id %s, which the %s never sent", f.id, side(asker))
		}
		return
	}
	delete(c.pending[asker], f.key)
	r.answered = f.seq
	if r.cancelled != 0 {
		c.report("answered-after-cancel", f.seq, r.cancelled, "answers %s %s after it was cancelled at #%d", r.method, r.id, r.cancelled)
	}
	c.httpResponse(f, r)
	if f.kind == jsonrpc.Error || c.inputRequired(f, r) {
		return
	}
	switch r.method {
	case "initialize":
		c.initializeResult(f, r)
	case "server/discover":
		c.discoverResult(f)
	case "tools/list":
		c.toolsListResult(f)
	case "tools/call":
		c.toolCallResult(f, r)
	}
	c.taskResult(f, r)
	c.resultShape(f, r)
	c.paginationResult(f, r)
}

// end runs the checks that need the whole session. A 2026-07-28
// subscriptions/listen is not owed an answer: its stream carries the
// notifications it asked for until the client cancels it, with
// notifications/cancelled or by closing the stream, and the server answers
// it only to end it gracefully (shutting down).
//
// A session with no end recorded is judged too unless the process
// recording it still runs: a recorder that was killed never records the
// end, and its session would otherwise hide its unanswered requests for
// ever. The finding says the recording broke off, as the answer may have
// passed in the moment before the recorder died.
func (c *checker) end() {
	state := c.info.EndState()
	if state != store.StateRecording { // a session still recording may yet be answered
		why := "was never answered"
		if c.info.End == nil {
			why = "has no answer before the recording broke off (" + store.StateNoEnd + ")"
		}
		for d := range 2 {
			for _, r := range sortedRequests(c.pending[d]) {
				if r.cancelled == 0 && !r.refused && !(r.method == "subscriptions/listen" && r.dir == store.C2S) && !(r.left && c.era == eraStateless) {
					c.report("unanswered", r.seq, 0, "%s %s (%s) %s", r.method, r.id, side(store.Dir(d)), why)
				}
			}
		}
	}
	c.lifecycleEnd()
}

func other(d store.Dir) store.Dir {
	if d == store.C2S {
		return store.S2C
	}
	return store.C2S
}

// side names who sends in direction d.
func side(d store.Dir) string {
	if d == store.C2S {
		return "client"
	}
	return "server"
}

func describe(f *frame) string {
	return fmt.Sprintf("%s %s", side(f.dir), f.method)
}
