package script

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/internal/suggest"
	"github.com/mcptape/mcptape/replay"
)

// This file checks a decoded File and compiles it into a Script: schemas
// resolved, templates parsed, regexes compiled, JSON rendered once. All
// problems are collected, so that `mcpmock check` lists them all at once.

// knownVersions are the protocol versions a script may speak, newest first.
var knownVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

const statelessVersion = "2026-07-28"

// tasksVersion is the first protocol version with tasks.
const tasksVersion = "2025-11-25"

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// logLevels are MCP's log severities, least severe first.
var logLevels = jsonrpc.LogLevels

var faults = []string{"hang", "close", "malformed", "duplicate", "wrong-id", "expire-session"}

// httpFaultPrefix starts a fault that answers with an HTTP status:
// http-503.
const httpFaultPrefix = "http-"

// httpFault reads a fault http-NNN: ok says the fault has that form, and
// problem what is wrong with its status ("" when it is a 4xx or 5xx).
func httpFault(f string) (status int32, ok bool, problem string) {
	digits, ok := strings.CutPrefix(f, httpFaultPrefix)
	if !ok {
		return 0, false, ""
	}
	n := 0
	for _, r := range digits {
		if r < '0' || r > '9' {
			n = -1
			break
		}
		n = 10*n + int(r-'0')
	}
	switch {
	case len(digits) != 3 || n < 0:
		return 0, true, "want http- and a three-digit status, such as http-503"
	case n < 400 || n > 599:
		return 0, true, fmt.Sprintf("%d is not an error status: want 4xx or 5xx (400-599)", n)
	}
	return int32(n), true, ""
}

// sendsNothing says whether a fault sends no JSON-RPC answer at all, so
// that an answer with it can hold no result or error.
func sendsNothing(fault string) bool {
	return fault == "hang" || fault == "close" || fault == "expire-session" || strings.HasPrefix(fault, httpFaultPrefix)
}

// Script is a compiled, valid script. It is immutable: sessions keep their
// own state.
type Script struct {
	file  string
	owner bool // the script has a server section: it is the whole server

	serverInfo   json.RawMessage
	instructions string
	versions     []string // newest first
	capabilities json.RawMessage
	listChanged  struct{ tools, resources, prompts bool }
	logging      bool
	tasks        bool // it declares tasks for tools/call (a tool's taskSupport is optional or required)
	completions  bool // it declares completions: it answers completion/complete (complete.go)
	pageSize     int
	sessions     *bool // server.sessions, as written

	tools     []*tool
	resources []*resource
	prompts   []*prompt
	templates []*resourceTemplate
	events    []*event
}

type tool struct {
	name           string
	def            json.RawMessage // the tools/list entry
	in             *jsonschema.Resolved
	invalidAsError bool
	answers        []*answer
	sequence       bool
	asks           []*ask // what it asks the client before it answers, in order
	// completes: its elicit is in url mode and says complete, sent once
	// the user accepts.
	completes bool
	// taskSupport is its execution.taskSupport: taskRequired,
	// taskOptional, taskForbidden or "" (tasks.go).
	taskSupport string
}

// execution.taskSupport values (2025-11-25).
const (
	taskRequired  = "required"
	taskOptional  = "optional"
	taskForbidden = "forbidden"
)

type answer struct {
	at Pos
	matcher
	content    []block
	structured any
	hasStruct  bool
	isError    bool
	meta       any
	err        *rpcErr
	delay      time.Duration
	progress   []step
	log        []logEntry
	fault      string
	status     int32               // fault http-NNN's; with err, the error is answered with it
	refusal    *replay.HTTPRefusal // its headers, or expire-session's; nil: none
	// readsArgs: its templates may read the call's arguments (readsArgs).
	readsArgs bool
}

// block is a content block; the templates fill its text fields per call.
type block struct {
	v        map[string]any
	text     *template.Template // v["text"] for text blocks
	resource *template.Template // v["resource"]["text"] for embedded text resources
}

type rpcErr struct {
	code int
	msg  *template.Template
	data any
}

type step struct {
	progress, total float64
	msg             *template.Template
	delay           time.Duration
}

type logEntry struct {
	level, logger string
	data          any
	text          *template.Template // data when it is a string
}

type resource struct {
	uri      string
	def      json.RawMessage
	contents json.RawMessage // without answers
	mimeType string
	answers  []*resourceAnswer
	asks     []*ask // what it asks the client before it is read, in order
	// completes: as a tool's.
	completes bool
}

type resourceAnswer struct {
	at Pos
	matcher
	text *template.Template
	blob string
	err  *rpcErr
}

type prompt struct {
	name     string
	def      json.RawMessage
	args     []string // the names of its arguments, in order
	required []string
	// complete completes its arguments, by name (complete.go).
	complete map[string]*completer
	messages []promptMsg // without answers
	answers  []*promptAnswer
	asks     []*ask // what it asks the client before it is got, in order
	// completes: as a tool's.
	completes bool
}

type promptAnswer struct {
	at Pos
	matcher
	messages []promptMsg
	err      *rpcErr
}

type promptMsg struct {
	role    string
	text    *template.Template
	content any
}

type event struct {
	tool            string
	calls, requests int
	addTools        []*tool
	removeTools     []string
	replaceTools    []*tool
	addResources    []*resource
	removeResources []string
	addPrompts      []*prompt
	removePrompts   []string

	addTemplates    []*resourceTemplate
	removeTemplates []string
}

type compiler struct {
	d *decoder
	s *Script
}

func (c *compiler) errorf(p Pos, format string, args ...any) { c.d.errorf(p, format, args...) }

func compile(d *decoder, f *File) *Script {
	c := &compiler{d: d, s: &Script{file: d.file}}
	s := c.s
	defaultInvalid := false
	if f.Server != nil {
		s.owner = true
		defaultInvalid = c.server(f.Server)
	}
	names, uris, pnames := map[string]Pos{}, map[string]Pos{}, map[string]Pos{}
	for _, t := range f.Tools {
		c.unique(names, t.Name, t.Pos, "tool name")
		s.tools = append(s.tools, c.tool(&t, defaultInvalid))
	}
	for _, r := range f.Resources {
		c.unique(uris, r.URI, r.Pos, "resource uri")
		s.resources = append(s.resources, c.resource(&r))
	}
	for _, p := range f.Prompts {
		c.unique(pnames, p.Name, p.Pos, "prompt name")
		s.prompts = append(s.prompts, c.prompt(&p))
	}
	templates := map[string]Pos{}
	for _, rt := range f.ResourceTemplates {
		c.unique(templates, rt.URITemplate, rt.Pos, "resource template")
		s.templates = append(s.templates, c.resourceTemplate(&rt))
	}
	c.events(f.Events, names, uris, pnames, templates, defaultInvalid)
	if s.owner {
		c.capabilities(f)
	}
	return s
}

// unique refuses key, written at p, when seen has it already: the
// second would never be listed or answered. It notes key in seen.
func (c *compiler) unique(seen map[string]Pos, key string, p Pos, what string) {
	if first, dup := seen[key]; dup && key != "" {
		c.errorf(p, "duplicate %s %q (first at line %d)", what, key, first.Line)
	}
	seen[key] = p
}

func (c *compiler) server(sv *Server) (invalidAsError bool) {
	s := c.s
	if sv.Name == "" {
		c.errorf(sv.Pos, "name is required")
	}
	if sv.Version == "" {
		c.errorf(sv.Pos, "version is required")
	}
	info := map[string]any{"name": sv.Name, "version": sv.Version}
	if sv.Title != "" {
		info["title"] = sv.Title
	}
	if sv.WebsiteURL != "" {
		info["websiteUrl"] = sv.WebsiteURL
	}
	if sv.Icons.Set {
		c.kind(sv.Icons, "list")
		info["icons"] = sv.Icons.V
	}
	s.serverInfo = mustJSON(info)
	s.instructions = sv.Instructions
	if sv.PageSize < 0 {
		c.errorf(sub(sv.Pos, "pageSize"), "page size must be 0 (no pages) or more")
	}
	s.pageSize = sv.PageSize
	s.sessions = sv.Sessions
	if len(sv.Protocols) == 0 {
		s.versions = slices.Clone(knownVersions)
	}
	for _, v := range knownVersions {
		if slices.Contains(sv.Protocols, v) {
			s.versions = append(s.versions, v)
		}
	}
	for i, v := range sv.Protocols {
		if !slices.Contains(knownVersions, v) {
			c.errorf(Pos{Line: sub(sv.Pos, "protocolVersions").Line, Col: sub(sv.Pos, "protocolVersions").Col, Path: fmt.Sprintf("server.protocolVersions[%d]", i)},
				"unknown protocol version %q (known: %s)", v, strings.Join(knownVersions, ", "))
		}
	}
	return c.invalidMode(sv.InvalidArguments, sub(sv.Pos, "invalidArguments"), false)
}

func (c *compiler) invalidMode(mode string, p Pos, def bool) bool {
	switch mode {
	case "":
		return def
	case "isError":
		return false
	case "error":
		return true
	}
	c.errorf(p, "want \"isError\" or \"error\", got %q", mode)
	return def
}

// taskSupport checks a tool's execution.taskSupport and returns it.
func (c *compiler) taskSupport(t *Tool) string {
	ex, _ := t.Execution.V.(map[string]any)
	v, present := ex["taskSupport"]
	if !present {
		return ""
	}
	ts, _ := v.(string)
	switch ts {
	case taskRequired, taskOptional, taskForbidden:
		return ts
	}
	c.errorf(sub(t.Execution.Pos, "taskSupport"), "taskSupport %v: want required, optional or forbidden", v)
	return ""
}

// capabilities derives what the server declares from what the script
// contains, unless the script spells them out.
func (c *compiler) capabilities(f *File) {
	s := c.s
	var touch struct{ tools, resources, prompts bool }
	for _, e := range f.Events {
		touch.tools = touch.tools || len(e.AddTools)+len(e.RemoveTools)+len(e.ReplaceTools) > 0
		touch.resources = touch.resources || len(e.AddResources)+len(e.RemoveResources)+len(e.AddResourceTemplates)+len(e.RemoveResourceTemplates) > 0
		touch.prompts = touch.prompts || len(e.AddPrompts)+len(e.RemovePrompts) > 0
	}
	for _, t := range s.allTools() {
		for _, a := range t.answers {
			s.logging = s.logging || len(a.log) > 0
		}
		s.tasks = s.tasks || t.taskSupport == taskOptional || t.taskSupport == taskRequired
	}
	completes := s.completes()
	if sv := f.Server; sv.Capabilities.Set {
		m, ok := sv.Capabilities.V.(map[string]any)
		if !ok {
			c.errorf(sv.Capabilities.Pos, "want a mapping of capabilities")
			return
		}
		s.capabilities = mustJSON(m)
		flag := func(k string) bool {
			sub, _ := m[k].(map[string]any)
			b, _ := sub["listChanged"].(bool)
			return b
		}
		s.listChanged.tools, s.listChanged.resources, s.listChanged.prompts = flag("tools"), flag("resources"), flag("prompts")
		logs := s.logging // some answer logs
		_, s.logging = m["logging"]
		if logs && !s.logging {
			// The spec has a server that sends log messages declare
			// logging; a host may drop them otherwise.
			c.errorf(sv.Capabilities.Pos, "an answer logs (log:), but these capabilities declare no logging: add logging: {}")
		}
		tasks, _ := m["tasks"].(map[string]any)
		requests, _ := tasks["requests"].(map[string]any)
		toolReqs, _ := requests["tools"].(map[string]any)
		_, s.tasks = toolReqs["call"]
		_, s.completions = m["completions"]
		if completes && !s.completions {
			// A client asks only a server that declares it (the
			// TypeScript SDK's, strictly, refuses to).
			c.errorf(sv.Capabilities.Pos, "a prompt argument or resource template completes (complete:), but these capabilities declare no completions: add completions: {}")
		}
		return
	}
	caps := map[string]any{}
	if len(f.Tools) > 0 || touch.tools {
		caps["tools"] = map[string]any{"listChanged": touch.tools}
		s.listChanged.tools = touch.tools
	}
	if len(f.Resources) > 0 || len(f.ResourceTemplates) > 0 || touch.resources {
		caps["resources"] = map[string]any{"listChanged": touch.resources}
		s.listChanged.resources = touch.resources
	}
	if len(f.Prompts) > 0 || touch.prompts {
		caps["prompts"] = map[string]any{"listChanged": touch.prompts}
		s.listChanged.prompts = touch.prompts
	}
	if s.logging {
		caps["logging"] = map[string]any{}
	}
	if completes {
		caps["completions"] = map[string]any{}
		s.completions = true
	}
	if s.tasks {
		caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
	s.capabilities = mustJSON(caps)
}

// completes says whether any prompt (one an event adds too) or resource
// template completes an argument.
func (s *Script) completes() bool {
	prompts, templates := slices.Clone(s.prompts), slices.Clone(s.templates)
	for _, e := range s.events {
		prompts = append(prompts, e.addPrompts...)
		templates = append(templates, e.addTemplates...)
	}
	return slices.ContainsFunc(prompts, func(p *prompt) bool { return len(p.complete) > 0 }) ||
		slices.ContainsFunc(templates, func(t *resourceTemplate) bool { return len(t.complete) > 0 })
}

func (s *Script) allTools() []*tool {
	all := slices.Clone(s.tools)
	for _, e := range s.events {
		all = append(all, e.addTools...)
		all = append(all, e.replaceTools...)
	}
	return all
}

// kind reports a Value that is not of the wanted JSON kind.
func (c *compiler) kind(v Value, want string) bool {
	ok := false
	switch want {
	case "object":
		_, ok = v.V.(map[string]any)
	case "list":
		_, ok = v.V.([]any)
	case "number":
		_, ok = number(v.V)
	}
	if !ok {
		c.errorf(v.Pos, "want a %s", map[string]string{"object": "mapping", "list": "list", "number": "number"}[want])
	}
	return ok
}

// sub locates a field of the mapping at p: the field's own value when it
// was written, else the mapping.
func sub(p Pos, field string) Pos {
	if f, ok := p.fields[field]; ok {
		return f
	}
	return Pos{Line: p.Line, Col: p.Col, Path: join(p.Path, field)}
}

func (c *compiler) tool(t *Tool, defaultInvalid bool) *tool {
	ct := &tool{name: t.Name}
	switch {
	case t.Name == "":
		c.errorf(t.Pos, "tool name is required")
	case !toolNameRE.MatchString(t.Name):
		c.errorf(sub(t.Pos, "name"), "tool name %q must be 1 to 128 characters of A-Z a-z 0-9 _ . -", t.Name)
	}
	def := map[string]any{"name": t.Name}
	in := t.InputSchema
	if !in.Set {
		in = Value{V: map[string]any{"type": "object"}, Set: true, Pos: sub(t.Pos, "inputSchema")}
	}
	ct.in = c.schema(in, true)
	if ct.in != nil {
		c.paramHeaders(in)
	}
	def["inputSchema"] = in.V
	var out *jsonschema.Resolved
	if t.OutputSchema.Set {
		out = c.schema(t.OutputSchema, true)
		def["outputSchema"] = t.OutputSchema.V
	}
	for k, v := range map[string]string{"title": t.Title, "description": t.Description} {
		if v != "" {
			def[k] = v
		}
	}
	for k, v := range map[string]struct {
		v    Value
		kind string
	}{"annotations": {t.Annotations, "object"}, "icons": {t.Icons, "list"}, "execution": {t.Execution, "object"}, "_meta": {t.Meta, "object"}} {
		if v.v.Set && c.kind(v.v, v.kind) {
			def[k] = v.v.V
		}
	}
	ct.def = mustJSON(def)
	ct.taskSupport = c.taskSupport(t)
	ct.invalidAsError = c.invalidMode(t.InvalidArguments, sub(t.Pos, "invalidArguments"), defaultInvalid)
	ct.asks, ct.completes = c.asks(t.Elicit, t.Sample, t.Roots)
	answers := t.Answers
	switch {
	case len(t.Answers) > 0 && len(t.Sequence) > 0:
		c.errorf(t.Pos, "give answers or sequence, not both")
	case len(t.Sequence) > 0:
		ct.sequence = true
		answers = t.Sequence
	case len(t.Answers) == 0:
		c.errorf(t.Pos, "tool %q has no answers: give answers or sequence", t.Name)
	}
	for i := range answers {
		a := c.answer(&answers[i], ct.sequence, ct.asks, out)
		ct.answers = append(ct.answers, a)
	}
	if !ct.sequence {
		c.unreachable(len(t.Answers), func(i int) (Pos, bool) { return t.Answers[i].Pos, t.Answers[i].When != nil })
	}
	return ct
}

// unreachable refuses answers after one without when: that one answers
// every call first, so what follows it is never chosen, and the author
// probably meant it to be the last, the default. at gives answer i's
// place and whether it has a when.
func (c *compiler) unreachable(n int, at func(i int) (Pos, bool)) {
	for i := 0; i+1 < n; i++ {
		p, hasWhen := at(i)
		if !hasWhen {
			next, _ := at(i + 1)
			c.errorf(next, "never chosen: the answer at line %d has no when, so it answers first; put the default last", p.Line)
			return
		}
	}
}

// schema compiles a JSON Schema (2020-12 by default, or draft-07 when its
// $schema says so) as the validator will use it.
func (c *compiler) schema(v Value, object bool) *jsonschema.Resolved {
	m, ok := v.V.(map[string]any)
	if !ok {
		c.errorf(v.Pos, "a schema must be a mapping")
		return nil
	}
	if object && m["type"] != "object" {
		c.errorf(v.Pos, "a tool schema must have type: object")
	}
	if !c.schemaTypes(v.node, v.Path, 0) {
		return nil
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(mustJSON(m), &sch); err != nil {
		c.errorf(v.Pos, "schema does not compile: %v", err)
		return nil
	}
	switch sch.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema":
	default:
		c.errorf(sub(v.Pos, "$schema"), "unsupported $schema %q: use JSON Schema 2020-12 or draft-07", sch.Schema)
		return nil
	}
	r, err := sch.Resolve(nil)
	if err != nil {
		c.errorf(v.Pos, "schema does not compile: %v", err)
		return nil
	}
	return r
}

// schemaTypeNames are the values JSON Schema's type keyword takes.
var schemaTypeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// schemaTypes checks every type keyword in the schema read from n: the
// schema library takes any name, and a schema with a misspelt one
// ("strng") loads, then refuses every call. It says whether all were
// known. Values that are data, not schemas (const, enum, default,
// examples), are not looked into.
func (c *compiler) schemaTypes(n *yaml.Node, path string, depth int) bool {
	n = resolve(n)
	if n == nil || depth > maxDepth {
		return true
	}
	ok := true
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			ok = c.schemaTypes(item, fmt.Sprintf("%s[%d]", path, i), depth+1) && ok
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, resolve(n.Content[i+1])
			switch {
			case val == nil:
			case key == "const", key == "enum", key == "default", key == "examples":
			case key == "type" && (val.Kind == yaml.ScalarNode || val.Kind == yaml.SequenceNode):
				names := []*yaml.Node{val}
				if val.Kind == yaml.SequenceNode {
					names = val.Content
				}
				for _, name := range names {
					if name = resolve(name); name != nil && name.Kind == yaml.ScalarNode && name.ShortTag() == "!!str" && !slices.Contains(schemaTypeNames, name.Value) {
						c.errorf(at(name, join(path, "type")), "unknown schema type %q (want %s)%s",
							name.Value, strings.Join(schemaTypeNames, ", "), suggest.DidYouMean(name.Value, schemaTypeNames, "%s"))
						ok = false
					}
				}
			default:
				ok = c.schemaTypes(val, join(path, key), depth+1) && ok
			}
		}
	}
	return ok
}

var funcs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"upper": stringFunc(strings.ToUpper),
	"lower": stringFunc(strings.ToLower),
	"trim":  stringFunc(strings.TrimSpace),
}

func init() {
	for k, f := range compareFuncs {
		funcs[k] = f
	}
}

// stringFunc lets a string function take any argument value, as a
// template prints it: a missing argument (nil) is empty, a number is
// what {{.args.n}} prints. Taking only strings, {{upper .args.text}}
// failed the whole call when the client left text out.
func stringFunc(f func(string) string) func(any) string {
	return func(v any) string {
		switch v := v.(type) {
		case nil:
			return ""
		case string:
			return f(v)
		default:
			return f(fmt.Sprint(v))
		}
	}
}

func (c *compiler) template(p Pos, text string) *template.Template {
	t, err := template.New(p.Path).Funcs(funcs).Option("missingkey=zero").Parse(text)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "template: "+p.Path+":")
		c.errorf(p, "template does not parse: line %s", msg)
		return nil
	}
	return t
}

// refusal checks the headers and body of a fault that refuses with an
// HTTP status (refuses: http-NNN or expire-session) and returns them for
// the reply; nil when there are none.
func (c *compiler) refusal(hs *Headers, body Value, refuses bool) *replay.HTTPRefusal {
	if len(hs.List) == 0 && !body.Set {
		return nil
	}
	if !refuses {
		if body.Set {
			c.errorf(body.Pos, "body goes with fault http-NNN or expire-session, which answer with an HTTP status")
		}
		if len(hs.List) > 0 {
			c.errorf(hs.Pos, "headers go with fault http-NNN or expire-session, which answer with an HTTP status")
		}
		return nil
	}
	r := c.refusalHeaders(hs, body.Set)
	if !body.Set {
		return r
	}
	contentType := "application/json"
	if s, ok := body.V.(string); ok {
		r.Body, contentType = []byte(s), "text/plain; charset=utf-8"
	} else if b, err := json.Marshal(body.V); err != nil {
		c.errorf(body.Pos, "body: %v", err)
	} else {
		r.Body = b
	}
	if r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// refusalHeaders checks a refusal's headers; Content-Type only withBody.
func (c *compiler) refusalHeaders(hs *Headers, withBody bool) *replay.HTTPRefusal {
	h := http.Header{}
	first := map[string]int{}
	for _, x := range hs.List {
		name := http.CanonicalHeaderKey(x.Name)
		if line, dup := first[name]; dup {
			c.errorf(x.Pos, "header %s given twice (first at line %d): give a list of values instead", name, line)
			continue
		}
		first[name] = x.Line
		if name == "Content-Type" && !withBody {
			c.errorf(x.Pos, "Content-Type goes with a body: without one, the body of a fault is mcpmock's line of text/plain, or its error as application/json")
			continue
		}
		for _, v := range x.Values {
			if err := mcphttp.CheckRefusalHeader(x.Name, v); err != nil {
				c.errorf(x.Pos, "%v", err)
				break
			}
		}
		h[name] = x.Values
	}
	return &replay.HTTPRefusal{Header: h}
}

func (c *compiler) answer(a *Answer, inSequence bool, asks []*ask, out *jsonschema.Resolved) *answer {
	ca := &answer{at: a.Pos, isError: a.IsError, delay: a.Delay.D, fault: a.Fault}
	if a.When != nil {
		if inSequence {
			c.errorf(sub(a.Pos, "when"), "answers in a sequence are chosen by call count; when applies only under answers")
		}
		ca.matcher = c.when(a.When, "tool", asks)
	}
	result := a.Text != "" || len(a.Content) > 0 || a.StructuredContent.Set || a.IsError || a.Meta.Set
	if written := slices.DeleteFunc(slices.Collect(maps.Keys(a.fields)), func(k string) bool { return k == "when" }); len(written) == 0 {
		// A slip ("answers: [{}]", or a when whose answer was never
		// written), which would answer an empty result without a word.
		c.errorf(a.Pos, "this answer says nothing: give text, content, structuredContent, isError or error (content: [] for an empty result)")
	}
	if a.Text != "" && len(a.Content) > 0 {
		c.errorf(a.Pos, "give text or content, not both")
	}
	if a.Error != nil && result {
		c.errorf(sub(a.Pos, "error"), "a JSON-RPC error cannot also carry a result (text, content, structuredContent, isError)")
	}
	status, isHTTP, problem := httpFault(a.Fault)
	ca.status = status
	switch {
	case problem != "":
		c.errorf(sub(a.Pos, "fault"), "fault %q: %s", a.Fault, problem)
	case a.Fault != "" && !isHTTP && !slices.Contains(faults, a.Fault):
		c.errorf(sub(a.Pos, "fault"), "unknown fault %q (known: %s, http-NNN)", a.Fault, strings.Join(faults, ", "))
	}
	switch {
	case isHTTP && a.Error != nil && result:
		// reported above: an error carries no result
	case isHTTP && a.Error != nil:
		// The error, answered with the status: its body is the error.
		if a.Body.Set {
			c.errorf(sub(a.Pos, "body"), "fault %q with an error sends the error as its body (application/json); remove body, or error", a.Fault)
		}
	case sendsNothing(a.Fault) && (result || a.Error != nil):
		c.errorf(sub(a.Pos, "fault"), "fault %q sends no answer; remove the result or error", a.Fault)
	}
	ca.refusal = c.refusal(&a.Headers, a.Body, isHTTP || a.Fault == "expire-session")
	if a.Text != "" {
		ca.content = append(ca.content, block{v: map[string]any{"type": "text"}, text: c.template(sub(a.Pos, "text"), a.Text)})
	}
	for i, v := range a.Content {
		ca.content = append(ca.content, c.block(v, fmt.Sprintf("content[%d]", i)))
	}
	if a.StructuredContent.Set {
		ca.structured, ca.hasStruct = a.StructuredContent.V, true
		c.kind(a.StructuredContent, "object")
		if out != nil {
			if err := out.Validate(a.StructuredContent.V); err != nil {
				c.errorf(a.StructuredContent.Pos, "structuredContent does not match the tool's outputSchema: %v", err)
			}
		}
	}
	if out != nil && !a.IsError && a.Error == nil && !sendsNothing(a.Fault) && !a.StructuredContent.Set {
		c.errorf(a.Pos, "the tool declares an outputSchema, so a successful answer needs structuredContent")
	}
	if a.Meta.Set && c.kind(a.Meta, "object") {
		ca.meta = a.Meta.V
	}
	if a.Error != nil {
		ca.err = c.rpcErr(a.Error)
	}
	last, lastSet := 0.0, false
	for _, st := range a.Progress {
		// The spec gives every notification a progress; left out, it
		// would go out as 0, which no one wrote.
		if _, set := st.fields["progress"]; !set {
			c.errorf(st.Pos, "a progress step needs progress: N, a number that increases from step to step")
		} else {
			if lastSet && st.Progress <= last {
				c.errorf(sub(st.Pos, "progress"), "progress must increase (%g after %g)", st.Progress, last)
			}
			last, lastSet = st.Progress, true
		}
		s := step{progress: st.Progress, total: st.Total, delay: st.Delay.D}
		if st.Message != "" {
			s.msg = c.template(sub(st.Pos, "message"), st.Message)
		}
		ca.progress = append(ca.progress, s)
	}
	for _, l := range a.Log {
		if !slices.Contains(logLevels, l.Level) {
			c.errorf(sub(l.Pos, "level"), "unknown log level %q (known: %s)", l.Level, strings.Join(logLevels, ", "))
		}
		if !l.Data.Set {
			c.errorf(l.Pos, "a log entry needs data")
		}
		le := logEntry{level: l.Level, logger: l.Logger, data: l.Data.V}
		if s, ok := l.Data.V.(string); ok {
			le.text = c.template(l.Data.Pos, s)
		}
		ca.log = append(ca.log, le)
	}
	ca.readsArgs = readsArgs(ca.templates()...)
	return ca
}

// rpcErr compiles a JSON-RPC error answer; its message is a template.
func (c *compiler) rpcErr(e *RPCError) *rpcErr {
	if e.Code == 0 {
		c.errorf(sub(e.Pos, "code"), "a JSON-RPC error needs a non-zero code")
	}
	if e.Message == "" {
		c.errorf(sub(e.Pos, "message"), "a JSON-RPC error needs a message")
	}
	r := &rpcErr{code: e.Code, msg: c.template(sub(e.Pos, "message"), e.Message)}
	if e.Data.Set {
		r.data = e.Data.V
	}
	return r
}

var blockFields = map[string][]string{
	"text":          {"text"},
	"image":         {"data", "mimeType"},
	"audio":         {"data", "mimeType"},
	"resource_link": {"uri", "name"},
	"resource":      {"resource"},
}

func (c *compiler) block(v Value, field string) block {
	p := Pos{Line: v.Line, Col: v.Col, Path: v.Path}
	m, ok := v.V.(map[string]any)
	if !ok {
		c.errorf(p, "a content block must be a mapping")
		return block{v: map[string]any{}}
	}
	b := block{v: m}
	typ, _ := m["type"].(string)
	need, known := blockFields[typ]
	if !known {
		c.errorf(p, "content block type %q is not one of text, image, audio, resource_link, resource", typ)
		return b
	}
	for _, f := range need {
		if _, ok := m[f]; !ok {
			c.errorf(p, "a %s block needs %s", typ, f)
		}
	}
	switch typ {
	case "text":
		if s, ok := m["text"].(string); ok {
			b.text = c.template(sub(p, "text"), s)
		} else if m["text"] != nil {
			c.errorf(sub(p, "text"), "want a string")
		}
	case "image", "audio":
		if s, _ := m["data"].(string); s != "" {
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				c.errorf(sub(p, "data"), "data is not base64: %v", err)
			}
		}
	case "resource":
		r, ok := m["resource"].(map[string]any)
		if !ok {
			c.errorf(sub(p, "resource"), "want a mapping with uri and text or blob")
			break
		}
		if _, ok := r["uri"].(string); !ok {
			c.errorf(sub(p, "resource"), "an embedded resource needs a uri")
		}
		if s, ok := r["text"].(string); ok {
			b.resource = c.template(sub(p, "resource.text"), s)
		}
	}
	return b
}

// mustJSON encodes values decoded from YAML, which are always encodable
// (the decoder refuses NaN and infinities).
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("script: encode %T: %v", v, err))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
