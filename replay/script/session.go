package script

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/suggest"
	"github.com/mcptape/mcptape/replay"
)

// This file answers the protocol around the tools: the handshake in both
// eras, the paginated lists, logging/setLevel and the
// 2026-07-28 subscriptions/listen stream, and it applies events.

// JSON-RPC error codes the script answers with.
const (
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternal           = -32603
	codeResourceNotFound   = -32002
	codeUnsupportedVersion = -32022
)

const (
	metaVersion            = "io.modelcontextprotocol/protocolVersion"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaSubscription       = "io.modelcontextprotocol/subscriptionId"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// session is one client's view of a script: the current tool, resource
// and prompt sets, call counts and which events have fired. Answer may run
// concurrently (HTTP); mu guards the state, never a wait.
type session struct {
	s *Script

	mu        sync.Mutex
	requests  int
	calls     map[string]int
	tools     roster[*tool]
	resources roster[*resource]
	prompts   roster[*prompt]
	templates roster[*resourceTemplate]
	fired     []bool
	minLevel  int // index into logLevels
	listeners map[*listener]struct{}
	// clientCaps are what the client's initialize declared, when this
	// source saw it (a source layered after another may not).
	clientCaps      map[string]json.RawMessage
	clientCapsKnown bool
	// version is the handshake-era version the session speaks: the one
	// initialize agreed on, or, where another source answered it, the
	// one the client asked for; "" before initialize.
	version string
	tasks   tasks // task-augmented calls (tasks.go)
	// background holds what prepared answers leave going, until the
	// engine asks for it (Background).
	background map[*replay.Request]func(context.Context, replay.Peer)
	// whys holds why prepared answers that had none say nothing of it
	// themselves (call.why), until the engine asks (WhyUnmatched).
	whys map[*replay.Request]string
}

func newSession(s *Script) *session {
	return &session{
		s:          s,
		calls:      map[string]int{},
		tools:      newRoster(s.tools, func(t *tool) string { return t.name }),
		resources:  newRoster(s.resources, func(r *resource) string { return r.uri }),
		prompts:    newRoster(s.prompts, func(p *prompt) string { return p.name }),
		templates:  newRoster(s.templates, func(t *resourceTemplate) string { return t.uriTemplate }),
		fired:      make([]bool, len(s.events)),
		listeners:  map[*listener]struct{}{},
		background: map[*replay.Request]func(context.Context, replay.Peer){},
		whys:       map[*replay.Request]string{},
	}
}

// call is what one request carries, parsed once.
type call struct {
	req       *replay.Request
	params    map[string]json.RawMessage
	version   string // the _meta protocol version of a stateless request
	stateless bool
	// logLevel is a stateless request's _meta log level: 2026-07-28 has
	// no logging/setLevel, and a request without one gets no logs.
	logLevel string
	number   int // this request's number in the session, from 1
	// prepare marks a call being prepared on the engine's reading
	// goroutine: what takes time (delays, progress, logging, a listen
	// stream) goes into play instead of running now.
	prepare bool
	play    func(ctx context.Context, peer replay.Peer) replay.Reply
	// background, with an immediate answer, is what it leaves going (a
	// task's answer), handed to the engine by Background.
	background func(ctx context.Context, peer replay.Peer)
	// why, with an immediate answer marked unmatched that does not say
	// why (a task's CreateTaskResult), is the script's reply the answer
	// stands for, handed to the engine by WhyUnmatched.
	why string
}

// waits trims a prepared call to what its answer, played later or in
// the background, needs of the request (replay.Request.Waiting): the
// answer is chosen, and the params it was chosen by are no longer read.
// Left whole, a call that waits would hold its frame: a run of 64 MiB
// calls to a tool with a delay, a frame each.
func (c *call) waits() {
	c.req = c.req.Waiting()
	c.params = nil
}

func (c *call) str(key string) (string, bool) {
	raw, ok := c.params[key]
	if !ok {
		return "", true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// Background implements replay.Backgrounder: what req's prepared answer
// left going (a task's answer), once.
func (ss *session) Background(req *replay.Request) func(context.Context, replay.Peer) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	work := ss.background[req]
	delete(ss.background, req)
	return work
}

// WhyUnmatched implements replay.Explainer: why req's prepared answer,
// marked unmatched, had none, where the answer does not say, once.
func (ss *session) WhyUnmatched(req *replay.Request) string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	why := ss.whys[req]
	delete(ss.whys, req)
	return why
}

// Close implements replay.SessionCloser: the session's tasks stop.
func (ss *session) Close() { ss.tasks.cancelAll() }

// Answer implements replay.SessionSource.
func (ss *session) Answer(ctx context.Context, peer replay.Peer, req *replay.Request) (replay.Reply, bool) {
	return ss.answer(ctx, peer, &call{req: req})
}

// Prepare implements replay.Preparer. Request numbers, call counts, the
// choice of answer and events all happen here, in the order requests
// arrive, so that pipelined requests get the same answers, in the same
// order, on every run; only the time an answer takes runs later, in Play.
func (ss *session) Prepare(req *replay.Request) (*replay.Prepared, bool) {
	c := &call{req: req, prepare: true}
	reply, ok := ss.answer(context.Background(), nil, c)
	if !ok {
		return nil, false
	}
	c.waits()
	if c.play == nil {
		ss.mu.Lock()
		if c.background != nil {
			ss.background[req] = c.background
		}
		if reply.Unmatched && c.why != "" {
			ss.whys[req] = c.why // the engine asks for it at once
		}
		ss.mu.Unlock()
		return &replay.Prepared{Reply: reply}, true
	}
	after, method := reply.After, req.Method
	return &replay.Prepared{Play: func(ctx context.Context, peer replay.Peer, _ *replay.Request) replay.Reply {
		r := c.play(ctx, peer)
		if c.stateless && r.Result != nil {
			r.Result = ss.stateless(method, r.Result)
		}
		r.After = append(r.After, after...)
		return r
	}}, true
}

func (ss *session) answer(ctx context.Context, peer replay.Peer, c *call) (replay.Reply, bool) {
	s := ss.s
	req := c.req
	if req.ID == nil {
		return replay.Reply{}, s.owner && req.Method == "notifications/initialized"
	}
	if len(req.Params) > 0 && string(req.Params) != "null" {
		// The members are slices of the frame, not copies: a tool's
		// arguments may be most of a frame of many megabytes.
		c.params = map[string]json.RawMessage{}
		if !req.ParamsMembers(func(name, value []byte) { c.params[string(name)] = value }) {
			if !s.owner {
				return replay.Reply{}, false
			}
			// Unmatched: a recording would have no answer for it either.
			r := errReply(codeInvalidParams, req.Method+": params must be an object", nil)
			r.Unmatched = true
			r.Error.Why = fmt.Sprintf("%s whose params are %s, not an object", req.Method, jsonKind(req.Params))
			return r, true
		}
	}
	if raw, ok := c.params["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) == nil {
			if v, ok := meta[metaVersion]; ok && json.Unmarshal(v, &c.version) == nil && c.version != "" {
				c.stateless = c.version >= statelessVersion
			}
			if v, ok := meta[metaLogLevel]; ok && c.stateless && json.Unmarshal(v, &c.logLevel) != nil {
				c.logLevel = string(v) // not a string: no level, refused
			}
		}
	}
	if req.Method == "initialize" {
		ss.noteClientCaps(c)
	}
	if reply, refused := ss.refuse(c); refused {
		return reply, s.owner
	}
	// Counted once served: a request the script refuses is none of the
	// session's, so a go-sdk client's server/discover probe, refused by a
	// handshake-era script, is not request 1 on stdio when over HTTP it
	// is in no session at all.
	ss.mu.Lock()
	ss.requests++
	c.number = ss.requests
	ss.mu.Unlock()
	reply, ok := ss.dispatch(ctx, peer, c)
	if !ok {
		return reply, false
	}
	if c.stateless && reply.Result != nil {
		reply.Result = ss.stateless(req.Method, reply.Result)
	}
	reply.After = append(reply.After, ss.fire(c)...)
	return reply, true
}

// refuse answers a request the script does not serve: a protocol
// version it does not speak, a log level the spec does not have, or a
// request of an era it does not speak (server/discover without
// 2026-07-28, initialize with only 2026-07-28). An override passes a
// request with a bad log level on, and serves the rest as it would.
func (ss *session) refuse(c *call) (reply replay.Reply, refused bool) {
	s, req := ss.s, c.req
	if c.logLevel != "" && !slices.Contains(logLevels, c.logLevel) {
		return errReply(codeInvalidParams, fmt.Sprintf("%s: unknown log level %q in _meta %q", req.Method, c.logLevel, metaLogLevel), nil), true
	}
	if !s.owner {
		return replay.Reply{}, false
	}
	switch {
	case c.version != "" && !slices.Contains(s.versions, c.version):
		return errReply(codeUnsupportedVersion, fmt.Sprintf("unsupported protocol version %q", c.version),
			map[string]any{"supported": s.versions, "requested": c.version}), true
	case c.version == "" && !s.speaksHandshake() && req.Method != "initialize":
		// Only 2026-07-28, where every request says its version: one
		// that does not is of no version this server speaks (as over
		// HTTP, where such a request gets the same error).
		return errReply(codeInvalidParams, fmt.Sprintf("Invalid params: a 2026-07-28 request must carry _meta %q: this server speaks only 2026-07-28", metaVersion), nil), true
	case req.Method == "server/discover" && !slices.Contains(s.versions, statelessVersion):
		return ss.discover(), true
	case req.Method == "initialize" && !s.speaksHandshake():
		return ss.initialize(c), true
	}
	return replay.Reply{}, false
}

func (ss *session) dispatch(ctx context.Context, peer replay.Peer, c *call) (replay.Reply, bool) {
	s := ss.s
	switch c.req.Method {
	case "tools/call":
		return ss.callTool(ctx, peer, c)
	case "resources/read":
		return ss.readResource(ctx, peer, c)
	case "prompts/get":
		return ss.getPrompt(ctx, peer, c)
	case "completion/complete":
		return ss.completeRequest(c)
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return ss.taskRequest(ctx, peer, c)
	}
	if !s.owner {
		return replay.Reply{}, false
	}
	switch c.req.Method {
	case "initialize":
		return ss.initialize(c), true
	case "server/discover":
		return ss.discover(), true
	case "subscriptions/listen":
		if c.prepare { // registered now; held open until cancelled, later
			l, agreed := ss.subscribe(c)
			c.play = func(ctx context.Context, peer replay.Peer) replay.Reply { return ss.serveListen(ctx, peer, l, agreed) }
			return replay.Reply{}, true
		}
		return ss.listen(ctx, peer, c), true
	case "ping":
		return resultReply(map[string]any{}), true
	case "logging/setLevel":
		return ss.setLevel(c), true
	case "tools/list":
		return list(ss, c, "tools", &ss.tools, func(t *tool) json.RawMessage { return t.def }), true
	case "resources/list":
		return list(ss, c, "resources", &ss.resources, func(r *resource) json.RawMessage { return r.def }), true
	case "resources/templates/list":
		return list(ss, c, "resourceTemplates", &ss.templates, func(t *resourceTemplate) json.RawMessage { return t.def }), true
	case "prompts/list":
		return list(ss, c, "prompts", &ss.prompts, func(p *prompt) json.RawMessage { return p.def }), true
	}
	return replay.Reply{}, false
}

func resultReply(v any) replay.Reply { return replay.Reply{Result: mustJSON(v)} }

func errReply(code int, msg string, data any) replay.Reply {
	e := &replay.RPCError{Code: code, Message: msg}
	if data != nil {
		e.Data = mustJSON(data)
	}
	return replay.Reply{Error: e}
}

// stateless adds what 2026-07-28 results of method carry: resultType, the
// server's identity in _meta, and for a cacheable complete result ttlMs and
// cacheScope. A script's list can change with any request (events), so
// the hints say so: stale at once, for this client alone.
func (ss *session) stateless(method string, result json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return result
	}
	if _, ok := m["resultType"]; !ok {
		m["resultType"] = json.RawMessage(`"complete"`)
	}
	if replay.Cacheable(method) && string(m["resultType"]) == `"complete"` {
		if _, ok := m["ttlMs"]; !ok {
			m["ttlMs"] = json.RawMessage(`0`)
		}
		if _, ok := m["cacheScope"]; !ok {
			m["cacheScope"] = json.RawMessage(`"private"`)
		}
	}
	var meta map[string]json.RawMessage
	if raw, ok := m["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if _, ok := meta[metaServerInfo]; !ok {
		meta[metaServerInfo] = ss.s.serverInfo
	}
	m["_meta"] = mustJSON(meta)
	return mustJSON(m)
}

func (ss *session) initialize(c *call) replay.Reply {
	s := ss.s
	asked, _ := c.str("protocolVersion")
	version := ""
	if asked < statelessVersion && slices.Contains(s.versions, asked) {
		version = asked
	} else {
		for _, v := range s.versions {
			if v < statelessVersion {
				version = v
				break
			}
		}
	}
	if version == "" {
		return errReply(codeUnsupportedVersion, "this server speaks only the 2026-07-28 protocol: use server/discover",
			map[string]any{"supported": s.versions, "requested": asked})
	}
	ss.mu.Lock()
	ss.version = version
	ss.mu.Unlock()
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    ss.capabilitiesFor(version),
		"serverInfo":      s.serverInfo,
	}
	if s.instructions != "" {
		res["instructions"] = s.instructions
	}
	return resultReply(res)
}

// capabilitiesFor is what the server declares to a client of version:
// no tasks before the version that has them, so that a script with task
// tools serves older clients as plain calls (taskCall).
func (ss *session) capabilitiesFor(version string) json.RawMessage {
	if !ss.s.tasks || version >= tasksVersion {
		return ss.s.capabilities
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(ss.s.capabilities, &caps) != nil {
		return ss.s.capabilities
	}
	delete(caps, "tasks")
	return mustJSON(caps)
}

// speaks is the handshake-era version of the session ("" not known).
func (ss *session) speaks() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// speaksHandshake says whether the script speaks a version before
// 2026-07-28, which has initialize and no version on each request.
func (s *Script) speaksHandshake() bool {
	return slices.ContainsFunc(s.versions, func(v string) bool { return v < statelessVersion })
}

func (ss *session) discover() replay.Reply {
	s := ss.s
	if !slices.Contains(s.versions, statelessVersion) {
		return errReply(codeMethodNotFound, "server/discover: this server speaks only handshake-era versions; use initialize", nil)
	}
	res := map[string]any{
		"supportedVersions": s.versions,
		"capabilities":      s.capabilities,
	}
	if s.instructions != "" {
		res["instructions"] = s.instructions
	}
	return resultReply(res)
}

func (ss *session) setLevel(c *call) replay.Reply {
	level, _ := c.str("level")
	i := slices.Index(logLevels, level)
	if i < 0 {
		return errReply(codeInvalidParams, fmt.Sprintf("logging/setLevel: unknown level %q", level), nil)
	}
	ss.mu.Lock()
	ss.minLevel = i
	ss.mu.Unlock()
	return resultReply(map[string]any{})
}

// listen serves a 2026-07-28 subscriptions/listen stream: acknowledge what
// the script can send, then hold the request open until the client ends
// it. Change notifications of stateless requests go to these streams.
// fire applies the events that c makes due and returns the list_changed
// notifications for the reply. Stateless requests get theirs on the
// subscriptions/listen streams instead.
func (ss *session) fire(c *call) []replay.Outgoing {
	s := ss.s
	ss.mu.Lock()
	var changed struct{ tools, resources, prompts bool }
	for i, e := range s.events {
		if ss.fired[i] {
			continue
		}
		due := (e.requests > 0 && ss.requests >= e.requests) || (e.tool != "" && ss.calls[e.tool] >= e.calls)
		if !due {
			continue
		}
		ss.fired[i] = true
		ss.apply(e)
		changed.tools = changed.tools || len(e.addTools)+len(e.removeTools)+len(e.replaceTools) > 0
		// The spec has one notification for resources and their
		// templates: resources/list_changed.
		changed.resources = changed.resources || len(e.addResources)+len(e.removeResources)+len(e.addTemplates)+len(e.removeTemplates) > 0
		changed.prompts = changed.prompts || len(e.addPrompts)+len(e.removePrompts) > 0
	}
	listeners := make([]*listener, 0, len(ss.listeners))
	for l := range ss.listeners {
		listeners = append(listeners, l)
	}
	ss.mu.Unlock()
	var out []replay.Outgoing
	send := func(method string, on func(*listener) bool) {
		if !c.stateless {
			out = append(out, replay.Outgoing{Method: method})
			return
		}
		// Only to the listen streams open now: with none, nothing is
		// made, so nothing waits to go undelivered (a cassette's
		// recorded list_changed does wait, and is counted).
		for _, l := range listeners {
			if on(l) {
				l.notify(method)
			}
		}
	}
	if changed.tools && s.listChanged.tools {
		send("notifications/tools/list_changed", func(l *listener) bool { return l.tools })
	}
	if changed.resources && s.listChanged.resources {
		send("notifications/resources/list_changed", func(l *listener) bool { return l.resources })
	}
	if changed.prompts && s.listChanged.prompts {
		send("notifications/prompts/list_changed", func(l *listener) bool { return l.prompts })
	}
	return out
}

// apply changes the session's sets; mu is held.
func (ss *session) apply(e *event) {
	for _, n := range e.removeTools {
		ss.tools.remove(n)
	}
	for _, nt := range e.replaceTools {
		ss.tools.put(nt)
	}
	for _, nt := range e.addTools {
		ss.tools.put(nt)
	}
	for _, u := range e.removeResources {
		ss.resources.remove(u)
	}
	// There is no replaceResources or replacePrompts: adding under a URI
	// or name that is listed replaces that item in place, as adding a
	// listed tool does, so a list never holds one twice.
	for _, r := range e.addResources {
		ss.resources.put(r)
	}
	for _, n := range e.removePrompts {
		ss.prompts.remove(n)
	}
	for _, p := range e.addPrompts {
		ss.prompts.put(p)
	}
	for _, u := range e.removeTemplates {
		ss.templates.remove(u)
	}
	for _, t := range e.addTemplates {
		ss.templates.put(t)
	}
}

// notInScript marks r, a whole-server script's reply to a request for
// a KIND (tool, prompt, resource) called name that it does not have,
// as unmatched, as a recording without that call would leave it: the
// client gets r as a real server's, and the report says the script has
// no such thing, and the nearest name it has.
func notInScript[T any](ss *session, r replay.Reply, kind, name string, list *[]*T, nameOf func(*T) string) replay.Reply {
	ss.mu.Lock()
	known := make([]string, len(*list))
	for i, x := range *list {
		known[i] = nameOf(x)
	}
	ss.mu.Unlock()
	r.Unmatched = true
	r.Error.Why = fmt.Sprintf("the script has no %s %q", kind, name) + suggest.DidYouMean(name, known, "%q")
	return r
}

// unnamed is a whole-server script's reply to a tools/call, prompts/get
// or resources/read whose params do not name the KIND it asks for
// (params.MEMBER missing, empty or not a string, or no params at all;
// WANT says what MEMBER must be): -32602, as from a real server, counted unmatched,
// as a recording leaves a request it has no answer for, with a why that
// says what the request lacks.
func unnamed(c *call, kind, member, want string) replay.Reply {
	method := c.req.Method
	r := errReply(codeInvalidParams, fmt.Sprintf("%s: params.%s must be %s", method, member, want), nil)
	r.Unmatched = true
	raw, ok := c.params[member]
	switch {
	case c.params == nil:
		r.Error.Why = method + " without params"
	case !ok:
		r.Error.Why = fmt.Sprintf("%s without params.%s", method, member)
	case string(raw) == `""`:
		r.Error.Why = fmt.Sprintf("%s with an empty params.%s", method, member)
	default:
		r.Error.Why = fmt.Sprintf("%s whose params.%s is %s, not a string", method, member, jsonKind(raw))
	}
	r.Error.Why += ": it names no " + kind
	return r
}

// jsonKind names the kind of the JSON value raw, for a why: never the
// value itself, which may be most of a 64 MiB frame.
func jsonKind(raw []byte) string {
	switch t := jsonrpc.SchemaType(raw); t {
	case "":
		return "nothing"
	case "boolean":
		return "true or false"
	case "null":
		return t
	case "integer", "number":
		return "a number"
	case "object", "array":
		return "an " + t
	default:
		return "a " + t
	}
}

// find returns the first item of *list that is the one asked for, read
// under ss.mu (events change the session's lists); nil when none is.
func find[T any](ss *session, list *[]*T, is func(*T) bool) *T {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if i := slices.IndexFunc(*list, is); i >= 0 {
		return (*list)[i]
	}
	return nil
}
