package script

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// This file turns a recording into a script: what the recorded server
// listed and answered, written as a whole-server script a person can read
// and edit (add an error case, a delay, a tool that does not exist yet).
// A cassette replays exactly what was recorded; a script made from it is
// where hand-written fakes start.

// FromTape writes a whole-server script that serves what the servers in
// tape served: their identity, the tools, resources and prompts they
// listed, and for each tool the answers it gave to each set of arguments
// (with the progress and log messages sent during the call). What a
// script cannot say the same way is left as a comment where it applies.
// The result always parses; Parse it to be sure of the rest.
func FromTape(tape *store.Tape, opts ...FromTapeOption) ([]byte, error) {
	r := newRecording()
	for _, o := range opts {
		o(r)
	}
	for i := range tape.Sessions {
		r.addSession(&tape.Sessions[i])
	}
	r.withoutSessions = replay.RecordedWithoutSessions(tape.Sessions)
	if len(r.sessions) == 1 {
		r.events = r.recordedEvents()
	}
	out, err := r.script()
	if err == nil && r.events != nil {
		if _, perr := Parse("events.yaml", out); perr != nil {
			// Each item was checked alone; together, an event may name a
			// tool the script had to leave out. Without events, then.
			r.events = nil
			r.notes = append(r.notes, "The recorded list changes are left out: as events they do not load ("+firstLine(perr.Error())+").")
			out, err = r.script()
		}
	}
	if err != nil || !r.declaresOtherwise(out) {
		return out, err
	}
	r.capabilitiesDiffer = true
	return r.script()
}

// declaresOtherwise says whether the script out declares other
// capabilities than the recorded server did.
func (r *recording) declaresOtherwise(out []byte) bool {
	var recorded, scripted any
	if json.Unmarshal(r.capabilities, &recorded) != nil {
		return false // nothing recorded to differ from
	}
	s, err := Parse("script.yaml", out)
	if err != nil || json.Unmarshal(s.capabilities, &scripted) != nil {
		return false
	}
	return !reflect.DeepEqual(recorded, scripted)
}

// script writes the script from what the recording gathered. It may run
// twice (see FromTape), so it starts its list of omissions afresh.
func (r *recording) script() ([]byte, error) {
	r.omitted = nil
	doc := newMap()
	doc.n.HeadComment = "A mcpmock script made by mcpspy from " + r.describe() + ".\n" +
		"It answers as the recorded server did; edit it freely (docs/SCRIPTS.md)."
	doc.set("server", r.server())
	if tools := r.tools(); len(tools.Content) > 0 {
		doc.set("tools", tools)
	}
	if res := r.resources(); len(res.Content) > 0 {
		doc.set("resources", res)
	}
	if prompts := r.prompts(); len(prompts.Content) > 0 {
		doc.set("prompts", prompts)
	}
	if templates := r.resourceTemplates(); len(templates.Content) > 0 {
		doc.set("resourceTemplates", templates)
	}
	if r.events != nil {
		doc.set("events", r.eventsNode())
		doc.n.Content[len(doc.n.Content)-2].HeadComment = "The server changed its lists while recording: the lists above are its first,\n" +
			"and these events change them where it did."
	}
	var foot []string
	if r.listChanged && r.events == nil {
		if len(r.sessions) > 1 {
			foot = append(foot, "The server announced list changes while recording. With several sessions the lists above\n"+
				"hold all it listed, as last listed: export one (--session ID) to get the changes as events.")
		} else {
			foot = append(foot, "The server announced list changes while recording, but no later listing showed what\n"+
				"changed: the lists above are as last listed. Write the changes as events if a test needs\n"+
				"them (docs/SCRIPTS.md#events).")
		}
	}
	foot = append(foot, r.completionNotes(r.promptOrder)...)
	foot = append(foot, r.omitted...)
	foot = append(foot, r.notes...)
	if r.capabilitiesDiffer {
		foot = append(foot, r.capabilitiesNote())
	}
	doc.n.FootComment = strings.Join(foot, "\n")
	return encodeYAML(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc.n}})
}

// FromTapeOption changes what FromTape writes.
type FromTapeOption func(*recording)

// WithTiming makes each answer take as long as the recorded server took:
// every progress step and the answer wait the time that passed before
// them on the wire (a delay, to the millisecond). Without it a script
// answers at once, as tests mostly want.
func WithTiming() FromTapeOption { return func(r *recording) { r.timing = true } }

// wire is one frame, decoded as far as the generator needs.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// exchange is one client request and what the server did about it.
type exchange struct {
	order    int    // requests in the order they were sent, across sessions
	nth      int    // requests in the order they were sent, in the session
	tool     string // for tools/call: the tool's name
	callN    int    // for tools/call: calls of the tool so far in the session, this one too
	session  string
	seq      uint64
	id       string // the request id, as written
	method   string
	params   json.RawMessage
	result   json.RawMessage // nil when answered with an error, or not at all
	err      json.RawMessage
	progress []json.RawMessage // notifications/progress params
	logs     []json.RawMessage // notifications/message params
	asks     []*recordedAsk    // what the server asked the client first (generate_asks.go)
	answered bool
	// refused is the bare status (4xx, 5xx) the request's POST got
	// instead of an answer, as mcpspy records it on the request; expired,
	// that it was a 404 for the session the request named.
	refused int
	expired bool
	// errStatus is the 4xx or 5xx status the request's error came with
	// (go-sdk's stateless server answers 404 and -32601), 0 if none.
	errStatus int
	// header is the refusal's, or errStatus's, headers a client acts on
	// (mcphttp.RefusalHeader), with its Content-Type when it had a body;
	// body, that body as recorded (nil: none).
	header http.Header
	body   []byte
	stream uint64 // the HTTP stream the request went on
	// taskFailed is the answer (replay.FailedTaskResult) to this call
	// when the server ran it as a task that tasks/get found failed and
	// the client asked no result of (generate_tasks.go).
	taskFailed json.RawMessage
	// When the request was sent, each progress step came and the answer
	// came, for WithTiming.
	sent, done time.Time
	stepTimes  []time.Time
}

// recording is what FromTape gathered from the sessions.
type recording struct {
	sessions     []string
	serverInfo   json.RawMessage
	instructions string
	// capabilities are the recorded server's, which the script does not
	// copy: a script declares what it serves (a foot note says so).
	capabilities json.RawMessage
	// capabilitiesDiffer: the script declares others (declaresOtherwise).
	capabilitiesDiffer bool
	toolOrder          []string
	toolDefs           map[string]json.RawMessage
	pageSize           int
	// withoutSessions: a server without sessions over Streamable HTTP
	// (written as server.sessions: false).
	withoutSessions bool
	calls           map[string][]*exchange // by tool name
	resOrder        []string
	resDefs         map[string]json.RawMessage
	reads           map[string]json.RawMessage // uri → the first contents entry read
	promptOrder     []string
	promptDefs      map[string]json.RawMessage
	gets            map[string]*exchange // prompt name → the first prompts/get
	// completions: the answered completion/complete requests, by what
	// they complete, in the order first asked (generate_complete.go).
	completions     map[completionKey][]recordedCompletion
	completionOrder []completionKey
	templateOrder   []string
	templateDefs    map[string]json.RawMessage // by uriTemplate, as last listed
	listChanged     bool
	omitted         []string // items left out of the script, and why
	notes           []string // more for the script's foot
	// For events: the last session's list history, and what it says.
	hist     []*listMark
	events   *recordedEvents
	requests int  // requests seen so far
	timing   bool // WithTiming
	// firstRounds: the questions of 2026-07-28 requests answered
	// input_required, for their retries: by session and what they ask
	// of, and by requestState (generate_asks.go).
	firstRounds map[string]firstRound
	// askers: the answered prompts/get and resources/read requests, by
	// askerKey, in the order asked (generate_asks.go).
	askers map[string][]*exchange
	// versions: the protocol versions the servers were seen to speak
	// (generate_versions.go).
	versions versionsSeen
}

func newRecording() *recording {
	return &recording{
		toolDefs: map[string]json.RawMessage{}, calls: map[string][]*exchange{},
		resDefs: map[string]json.RawMessage{}, reads: map[string]json.RawMessage{},
		promptDefs: map[string]json.RawMessage{}, gets: map[string]*exchange{},
		firstRounds: map[string]firstRound{}, askers: map[string][]*exchange{},
		versions: versionsSeen{spoken: map[string]bool{}},
	}
}

func (r *recording) describe() string {
	if len(r.sessions) == 1 {
		return "session " + r.sessions[0]
	}
	return "sessions " + strings.Join(r.sessions, ", ")
}

func (r *recording) addSession(s *store.TapeSession) {
	r.sessions = append(r.sessions, s.Info.ID)
	if len(s.Info.Handshake.ServerInfo) > 0 {
		r.serverInfo = s.Info.Handshake.ServerInfo
	}
	if s.Info.Handshake.Instructions != "" {
		r.instructions = s.Info.Handshake.Instructions
	}
	if len(s.Info.Handshake.Capabilities) > 0 {
		r.capabilities = s.Info.Handshake.Capabilities
	}
	pending := map[string]*exchange{} // by request id (jsonrpc.CanonicalID)
	byToken := map[string]*exchange{} // by progressToken (jsonrpc.CanonicalID)
	// inflight: the requests not yet answered that a script's elicit,
	// sample and roots can belong to (tools/call, prompts/get,
	// resources/read); toolCalls() is its tools/call alone.
	var inflight []*exchange
	toolCalls := func() []*exchange {
		return slices.DeleteFunc(slices.Clone(inflight), func(y *exchange) bool { return y.method != "tools/call" })
	}
	var lastAnswered *exchange
	nth, calls := 0, map[string]int{} // requests, and tools/calls by tool, in the session
	tasks := recordedTasks{}          // tools/calls the server ran as tasks, by task id
	// refusedOnStream: requests the recording marks refused, by the HTTP
	// stream of their POST, whose refusal's body may follow (mcpspy keeps
	// it as a frame of its own).
	refusedOnStream := map[uint64]*exchange{}
	asked := map[string]*recordedAsk{} // questions the server put to the client, by request id
	// askedAsTask: questions the client made a task of, by the task's id,
	// until the server fetches its result (tasks/result), the reply.
	askedAsTask := map[string]*recordedAsk{}
	var versions versionsSeen
	defer func() {
		versions.info(s.Info.Handshake)
		r.addVersions(versions)
	}()
	r.hist = nil
	for _, m := range s.Messages {
		var w wire
		bad := json.Unmarshal(m.Frame, &w) != nil
		// Ids pair by value: an answer or a reply may write its request's
		// id another way ("\u0031" for "1", 1.0 for 1).
		key := jsonrpc.CanonicalIDString(string(w.ID))
		if x := refusedOn(pending, refusedOnStream, m); x != nil && (bad || len(w.ID) == 0 || pending[key] != x) {
			// The body of a refusal, which is no answer to the request.
			delete(pending, jsonrpc.CanonicalIDString(x.id))
			delete(refusedOnStream, x.stream)
			inflight = slices.DeleteFunc(inflight, func(y *exchange) bool { return y == x })
			learnt := x.refused != 0
			x.refuse(m.HTTP, m.Frame)
			if !learnt {
				r.learn(x)
			}
			continue
		}
		if bad {
			continue // malformed frames and batches teach a script nothing
		}
		switch {
		case m.Dir == store.C2S && w.Method != "" && len(w.ID) > 0:
			r.requests++
			nth++
			versions.request(w.Params)
			x := &exchange{order: r.requests, nth: nth, session: s.Info.ID, seq: m.Seq, method: w.Method, params: w.Params, sent: m.Time, id: string(w.ID)}
			if m.HTTP != nil {
				x.stream = m.HTTP.StreamID
			}
			if w.Method == "tools/call" {
				x.tool, x.callN = countCall(calls, w.Params)
			}
			if x.refuse(m.HTTP, nil) {
				// Refused: no answer follows, nor anything of its own,
				// but perhaps the refusal's body.
				if x.stream != 0 {
					refusedOnStream[x.stream] = x
				}
				r.learn(x)
				continue
			}
			pending[key] = x
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			if json.Unmarshal(w.Params, &p) == nil && len(p.Meta.ProgressToken) > 0 {
				byToken[jsonrpc.CanonicalIDString(string(p.Meta.ProgressToken))] = x // a token compares as an id
			}
			if jsonrpc.MayAskForInput(w.Method) {
				inflight = append(inflight, x)
			}
		case m.Dir == store.S2C && w.Method == "" && len(w.ID) > 0:
			x := pending[key]
			if x == nil {
				continue
			}
			delete(pending, key)
			versions.answer(x, w.Result, w.Error)
			if tasks.answer(x, w.Result, w.Error, m.Time) {
				continue // a task's creation or state: the call's answer comes with tasks/result
			}
			if x.method == "tasks/result" {
				x = tasks.resultOf(x, w.Result, w.Error, m.Time)
				if x == nil {
					continue
				}
			} else {
				x.result, x.err, x.answered, x.done = w.Result, w.Error, true, m.Time
			}
			inflight = slices.DeleteFunc(inflight, func(y *exchange) bool { return y == x })
			if h := m.HTTP; len(w.Error) > 0 && h.RefusalBody() {
				x.errStatus, x.header = h.Status, mcphttp.RefusalHeader(h.ResponseHeader, false)
			}
			r.learn(x)
			r.noteListing(x)
			lastAnswered = x
		case m.Dir == store.S2C && w.Method == "tasks/result" && len(w.ID) > 0:
			// The server fetches the result of a question it asked as
			// a task of the client's: that is the reply.
			var p struct {
				TaskID string `json:"taskId"`
			}
			if json.Unmarshal(w.Params, &p) == nil && askedAsTask[p.TaskID] != nil {
				asked[key] = askedAsTask[p.TaskID]
				delete(askedAsTask, p.TaskID)
			}
		case m.Dir == store.S2C && w.Method != "" && len(w.ID) > 0:
			// The server asks the client something, mid-call.
			k, ok := askKindOf(w.Method)
			var stream uint64
			if m.HTTP != nil {
				stream = m.HTTP.StreamID
			}
			if x := askedDuring(inflight, stream); ok && x != nil && x.ask(k) == nil {
				a := &recordedAsk{kind: k, params: w.Params}
				x.asks = append(x.asks, a)
				asked[key] = a
			}
		case m.Dir == store.C2S && w.Method == "" && len(w.ID) > 0:
			if a := asked[key]; a != nil {
				delete(asked, key)
				a.at = m.Time
				if t, made := taskOf(w.Result); made && jsonrpc.Member(a.params, "task") != nil {
					askedAsTask[t.TaskID] = a // the reply is the task's result
				} else if isObject(w.Result) {
					a.reply = w.Result
				}
			}
		case m.Dir == store.S2C && w.Method == "notifications/elicitation/complete":
			var stream uint64
			if m.HTTP != nil {
				stream = m.HTTP.StreamID
			}
			if x := askedDuring(inflight, stream); x != nil {
				if a := x.ask(elicitKind); a != nil {
					a.complete = true
				}
			}
		case m.Dir == store.S2C && w.Method == "notifications/progress":
			var p struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			}
			if json.Unmarshal(w.Params, &p) == nil {
				if x := byToken[jsonrpc.CanonicalIDString(string(p.ProgressToken))]; x != nil && !x.answered {
					x.progress = append(x.progress, w.Params)
					x.stepTimes = append(x.stepTimes, m.Time)
				}
			}
		case m.Dir == store.S2C && w.Method == "notifications/message":
			// Logs say nothing of the call they belong to: only one
			// call in flight makes it certain.
			if c := toolCalls(); len(c) == 1 {
				c[0].logs = append(c[0].logs, w.Params)
			}
		case m.Dir == store.S2C && strings.HasPrefix(w.Method, "notifications/") && strings.HasSuffix(w.Method, "/list_changed"):
			r.listChanged = true
			// mcpmock fires an event after an answer: the call in
			// flight made the change, or else the last one answered.
			trigger := lastAnswered
			if c := toolCalls(); len(c) == 1 {
				trigger = c[0]
			}
			r.noteChange(w.Method, trigger)
		}
	}
	for _, x := range toolCalls() { // calls the session ended without an answer to
		tasks.failed(x)
		r.learn(x)
	}
}

// refuse takes the refusal meta records, if any (store.HTTPMeta.Refusal),
// and says whether there was one; body is the refusal's, if it had one.
func (x *exchange) refuse(meta *store.HTTPMeta, body []byte) bool {
	status, gone := meta.Refusal()
	if status == 0 {
		return false
	}
	x.refused, x.expired, x.body = status, gone, body
	x.header = mcphttp.RefusalHeader(meta.ResponseHeader, body != nil)
	return true
}

// refusedOn is the request whose POST m answers with a 4xx or 5xx body
// (the recorder keeps it as a frame on the request's stream): one still
// pending, or one the recording marked refused already; or nil.
func refusedOn(pending map[string]*exchange, refusedOnStream map[uint64]*exchange, m *store.Message) *exchange {
	if m.Dir != store.S2C || !m.HTTP.RefusalBody() || m.HTTP.StreamID == 0 {
		return nil
	}
	for _, x := range pending {
		if x.stream == m.HTTP.StreamID {
			return x
		}
	}
	return refusedOnStream[m.HTTP.StreamID]
}

// countCall counts a tools/call of the tool its params name in the
// session's calls, and returns the name and the count.
func countCall(calls map[string]int, params json.RawMessage) (string, int) {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil || p.Name == "" {
		return "", 0
	}
	calls[p.Name]++
	return p.Name, calls[p.Name]
}

// learn takes what an answered request tells about the server.
func (r *recording) learn(x *exchange) {
	if (x.method == "prompts/get" || x.method == "resources/read") && r.noteAsker(x) {
		return // the first round of a multi round-trip request; its retry answers
	}
	if len(x.err) > 0 && x.method != "tools/call" {
		return
	}
	switch x.method {
	case "tools/call":
		if len(x.result) > 0 && jsonrpc.AsksForInput(x.result) {
			// The first round of a multi round-trip call; its retry
			// answers, and learns from it what was asked.
			r.noteFirstRound(x)
			return
		}
		r.takeFirstRound(x)
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(x.params, &p) == nil && p.Name != "" {
			r.calls[p.Name] = append(r.calls[p.Name], x)
			if !slices.Contains(r.toolOrder, p.Name) {
				r.toolOrder = append(r.toolOrder, p.Name)
			}
		}
	case "tools/list":
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if json.Unmarshal(x.result, &res) != nil {
			return
		}
		if res.NextCursor != "" && r.pageSize == 0 && !bytes.Contains(x.params, []byte(`"cursor"`)) {
			r.pageSize = len(res.Tools)
		}
		appendDefs(r.toolDefs, &r.toolOrder, res.Tools, "name")
	case "resources/list":
		var res struct {
			Resources []json.RawMessage `json:"resources"`
		}
		if json.Unmarshal(x.result, &res) == nil {
			appendDefs(r.resDefs, &r.resOrder, res.Resources, "uri")
		}
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		var res struct {
			Contents []json.RawMessage `json:"contents"`
		}
		if json.Unmarshal(x.params, &p) == nil && json.Unmarshal(x.result, &res) == nil && len(res.Contents) > 0 {
			if _, seen := r.reads[p.URI]; !seen {
				r.reads[p.URI] = res.Contents[0]
			}
			if !slices.Contains(r.resOrder, p.URI) {
				r.resOrder = append(r.resOrder, p.URI)
			}
		}
	case "completion/complete":
		r.noteCompletion(x)
	case "resources/templates/list":
		var res struct {
			ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
		}
		if json.Unmarshal(x.result, &res) == nil {
			if r.templateDefs == nil {
				r.templateDefs = map[string]json.RawMessage{}
			}
			appendDefs(r.templateDefs, &r.templateOrder, res.ResourceTemplates, "uriTemplate")
		}
	case "prompts/list":
		var res struct {
			Prompts []json.RawMessage `json:"prompts"`
		}
		if json.Unmarshal(x.result, &res) == nil {
			appendDefs(r.promptDefs, &r.promptOrder, res.Prompts, "name")
		}
	case "prompts/get":
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(x.params, &p) == nil && p.Name != "" && r.gets[p.Name] == nil {
			r.gets[p.Name] = x
			if !slices.Contains(r.promptOrder, p.Name) {
				r.promptOrder = append(r.promptOrder, p.Name)
			}
		}
	}
}

// appendDefs keeps the latest definition of each listed item, by its key
// member, and the order in which they were first seen.
func appendDefs(defs map[string]json.RawMessage, order *[]string, items []json.RawMessage, key string) {
	for _, item := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(item, &m) != nil {
			continue
		}
		var k string
		if json.Unmarshal(m[key], &k) != nil || k == "" {
			continue
		}
		if _, seen := defs[k]; !seen && !slices.Contains(*order, k) {
			*order = append(*order, k)
		}
		defs[k] = item
	}
}

// capabilitiesNote says what the recorded server declared, for a script
// that declares otherwise: a script derives its capabilities from what it
// serves, so a host that adapts to them (one that lists prompts only from
// a server that declares prompts) may act otherwise against it. Copying
// them would declare what the script cannot answer.
func (r *recording) capabilitiesNote() string {
	var compact bytes.Buffer
	if json.Compact(&compact, r.capabilities) != nil {
		return ""
	}
	return "The recorded server declared the capabilities " + compact.String() + ".\n" +
		"This script declares those it serves (docs/SCRIPTS.md#server, Capabilities); give\n" +
		"server.capabilities to declare others."
}
