package script

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file writes FromTape's server and tools from what the recording
// gathered (resources and prompts: generate_items.go).

// The members of each definition a script takes as written.
var (
	serverInfoMembers       = []string{"title", "websiteUrl", "icons"}
	toolMembers             = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "execution", "_meta"}
	resourceMembers         = []string{"uri", "name", "title", "description", "mimeType", "annotations", "icons", "_meta"}
	promptMembers           = []string{"name", "title", "description", "arguments", "icons", "_meta"}
	resourceTemplateMembers = []string{"uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta"}
)

// pick copies the members of the JSON object raw that are in keep, in the
// order written; nil when raw is no object.
func pick(raw json.RawMessage, keep []string) mapNode {
	out := newMap()
	n, err := jsonNode(raw)
	if err != nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if slices.Contains(keep, n.Content[i].Value) {
			out.n.Content = append(out.n.Content, n.Content[i], n.Content[i+1])
		}
	}
	return out
}

func (r *recording) server() *yaml.Node {
	var info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	m := newMap()
	if json.Unmarshal(r.serverInfo, &info) != nil || info.Name == "" || info.Version == "" {
		info.Name, info.Version = "recorded-server", "1.0.0"
		m.n.HeadComment = "No handshake was recorded: the name and version are made up."
	}
	m.set("name", strNode(info.Name))
	m.set("version", strNode(info.Version))
	extra := pick(r.serverInfo, serverInfoMembers)
	m.n.Content = append(m.n.Content, extra.n.Content...)
	if r.instructions != "" {
		m.set("instructions", strNode(r.instructions))
	}
	versions, versionsNote := r.protocolVersions()
	m.set("protocolVersions", versions)
	if versionsNote != "" {
		m.n.Content[len(m.n.Content)-2].HeadComment = versionsNote
	}
	if r.pageSize > 0 {
		m.set("pageSize", intNode(r.pageSize))
	}
	if r.withoutSessions {
		m.set("sessions", boolNode(false))
	}
	if err := loadsAs("server", m.n); err != nil {
		plain := newMap()
		plain.set("name", strNode("recorded-server"))
		plain.set("version", strNode("1.0.0"))
		plain.set("protocolVersions", versions)
		plain.n.HeadComment = "The recorded identity does not load (" + firstLine(err.Error()) + "): this one is made up."
		return plain.n
	}
	return m.n
}

func (r *recording) tools() *yaml.Node {
	out := seqNode()
	for _, name := range r.toolOrder {
		if r.events != nil && !r.events.initially("tools", name) {
			continue // an event adds it
		}
		def, listed := r.toolDefs[name]
		calls := r.calls[name]
		if r.events != nil {
			def, listed = r.events.initialDef("tools", name, def, listed)
			calls = r.events.callsOf(name, nil, calls)
		}
		t, err := r.toolNode(name, def, listed, calls)
		if err != nil {
			r.omit("tool", name, err)
			continue
		}
		out.Content = append(out.Content, t)
	}
	return out
}

// toolNode writes one tool, as listed in def, answering calls. What
// keeps it from loading is left out with a comment saying so, as little
// as will do: a schema the recorded server's own answers broke (or that
// does not compile), else the answers that do not load. err says why not
// even a tool with none of those loads.
func (r *recording) toolNode(name string, def json.RawMessage, listed bool, calls []*exchange) (*yaml.Node, error) {
	var notes []string
	if !listed {
		def = mustJSON(map[string]any{"name": name})
		notes = append(notes, "Called but never listed while recording.")
	}
	if len(calls) == 0 {
		notes = append(notes, "Never called while recording: write its answers.")
	}
	asks, askNotes := r.askFields(calls)
	notes = append(notes, askNotes...)
	key, list := r.answers(name, calls, elicits(asks))
	build := func(drop []string, list *yaml.Node) *yaml.Node {
		t := pick(def, slices.DeleteFunc(slices.Clone(toolMembers), func(k string) bool { return slices.Contains(drop, k) }))
		t.n.Content = append(t.n.Content, asks...)
		t.set(key, list)
		t.n.HeadComment = strings.Join(notes, "\n")
		return t.n
	}
	schemas := []string{"outputSchema", "inputSchema"}
	for _, drop := range [][]string{nil, schemas[:1], schemas} {
		if t := build(drop, list); loadsAs("tools", t) == nil {
			if len(drop) > 0 {
				notes = append(notes, fmt.Sprintf("Its recorded %s is left out: the server's own answers broke it, or it does not compile.", strings.Join(drop, " and ")))
			}
			return build(drop, list), nil
		}
	}
	kept := seqNode()
	var why error
	for _, a := range list.Content {
		if err := loadsAs("tools", build(schemas, seqNode(a))); err != nil {
			why = cmp.Or(why, err)
			continue
		}
		kept.Content = append(kept.Content, a)
	}
	if len(kept.Content) == 0 {
		kept.Content = append(kept.Content, fallbackAnswer("no recorded answer loads as a script"))
	}
	notes = append(notes, fmt.Sprintf("Its recorded schemas and %d answers are left out: %s", len(list.Content)-len(kept.Content), firstLine(why.Error())))
	t := build(schemas, kept)
	return t, loadsAs("tools", t)
}

// omit notes an item left out of the script entirely.
func (r *recording) omit(kind, name string, err error) {
	r.omitted = append(r.omitted, fmt.Sprintf("Left out %s %q: %s", kind, name, firstLine(err.Error())))
}

// loadsAs says whether item loads as the one entry of a script's section
// (tools, resources, prompts), or as its server.
func loadsAs(section string, item *yaml.Node) error {
	doc := newMap()
	if section == "server" {
		doc.set(section, item)
	} else {
		doc.set(section, seqNode(item))
	}
	b, err := encodeYAML(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc.n}})
	if err != nil {
		return err
	}
	_, err = Parse(section+".yaml", b)
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// answers writes a tool's recorded calls as the script's answers: one per
// set of arguments, chosen by when.exact; arguments never recorded get
// the script's reply when no answer matches. A tool always called with the same arguments but
// answered differently becomes a sequence, which answers by call count
// as the server did. byAction: the tool elicits, and the user's reply
// chooses the answer too.
func (r *recording) answers(name string, calls []*exchange, byAction bool) (key string, list *yaml.Node) {
	type group struct {
		args     map[string]any
		action   string      // the user's reply to the elicitation, if any
		outcomes []*exchange // distinct outcomes, in order
	}
	// In the order asked, as mcpmock counts calls, not as answered.
	calls = slices.SortedFunc(slices.Values(calls), func(a, b *exchange) int { return a.order - b.order })
	var groups []*group
	// By the arguments' JSON, keys sorted (equal arguments, one key), and
	// the elicited action: the server's answer depended on both.
	byArgs := map[string]*group{}
	for _, x := range calls {
		args, ok := callArgs(x.params)
		if !ok {
			continue // mcpmock refuses arguments that are no object itself
		}
		var action string
		if byAction {
			action = x.elicitedAction()
		}
		key := string(mustJSON(args)) + "\x00" + action
		g := byArgs[key]
		if g == nil {
			g = &group{args: args, action: action}
			byArgs[key] = g
			groups = append(groups, g)
		}
		if !slices.ContainsFunc(g.outcomes, func(y *exchange) bool { return sameOutcome(x, y) }) {
			g.outcomes = append(g.outcomes, x)
		}
	}
	list = seqNode()
	switch {
	case len(groups) == 0:
		list.Content = append(list.Content, fallbackAnswer(fmt.Sprintf("no call of %s was recorded", name)))
		return "answers", list
	case len(groups) == 1 && len(groups[0].outcomes) > 1:
		for _, x := range groups[0].outcomes {
			list.Content = append(list.Content, r.answerNode(x))
		}
		first := list.Content[0] // its own note, if any, follows
		first.HeadComment = strings.TrimSuffix("Answers by call count, as recorded; the last repeats.\n"+first.HeadComment, "\n")
		return "sequence", list
	}
	// The calls with each elicited action ("" for none), when they were
	// answered alike by one template over their arguments, get that one
	// answer in place of one per set of arguments.
	general := map[string]*yaml.Node{}
	if !slices.ContainsFunc(groups, func(g *group) bool { return len(g.outcomes) > 1 }) {
		byReply := map[string][]*group{}
		for _, g := range groups {
			byReply[g.action] = append(byReply[g.action], g)
		}
		for action, gs := range byReply {
			if len(gs) < 2 {
				continue
			}
			var firsts []*exchange
			var args []map[string]any
			for _, g := range gs {
				firsts, args = append(firsts, g.outcomes[0]), append(args, g.args)
			}
			if a := r.oneTextAnswer(firsts, args); a != nil {
				general[action] = a
			}
		}
	}
	if a := general[""]; a != nil && !slices.ContainsFunc(groups, func(g *group) bool { return g.action != "" }) {
		list.Content = append(list.Content, a)
		return "answers", list // it answers every call, and any other
	}
	// A call whose client was not asked matches whatever the user
	// replies: after those that say what the user replied.
	slices.SortStableFunc(groups, func(a, b *group) int { return cmp.Compare(boolInt(a.action == ""), boolInt(b.action == "")) })
	for _, g := range groups {
		if a, ok := general[g.action]; ok {
			if a != nil {
				list.Content = append(list.Content, withElicited(a, g.action))
				general[g.action] = nil // once, for all the group's calls
			}
			continue
		}
		a := r.answerNode(g.outcomes[0])
		when := newMap()
		args, _ := jsonNode(mustJSON(g.args))
		when.set("exact", args)
		if g.action != "" {
			when.set("elicited", elicitedNode(g.action))
		}
		a.Content = append([]*yaml.Node{strNode("when"), flow(when.n)}, a.Content...)
		if len(g.outcomes) > 1 {
			var seqs []string
			for _, x := range g.outcomes[1:] {
				seqs = append(seqs, fmt.Sprintf("%s seq %d", x.session, x.seq))
			}
			a.HeadComment = fmt.Sprintf("Later calls with these arguments were answered otherwise (%s); this answers them all.", strings.Join(seqs, ", "))
		}
		list.Content = append(list.Content, a)
	}
	// No answer of the script's own for arguments never recorded: the
	// script's reply when none matches says as much (an isError result
	// naming the tool and the arguments), and, unlike an answer, counts
	// as unmatched, as the recording replayed would.
	return "answers", list
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withElicited is answer a chosen by the user's elicited action too
// (none: a as it is).
func withElicited(a *yaml.Node, action string) *yaml.Node {
	if action == "" {
		return a
	}
	when := newMap()
	when.set("elicited", elicitedNode(action))
	a.Content = append([]*yaml.Node{strNode("when"), flow(when.n)}, a.Content...)
	return a
}

// elicitedNode is when.elicited for the user's action.
func elicitedNode(action string) *yaml.Node {
	elicited := newMap()
	elicited.set("action", strNode(action))
	return elicited.n
}

// oneTextAnswer is one answer for every set of arguments, when calls
// with different arguments (args[i] for calls[i]) were each answered with
// text alone and one template over the arguments renders every one of
// those texts ("Echo: {{.args.message}}", or the same text whatever the
// arguments); else nil. Two recorded calls or more are the evidence, so
// the script answers arguments never recorded as the server would have.
func (r *recording) oneTextAnswer(calls []*exchange, args []map[string]any) *yaml.Node {
	texts := make([]string, len(calls))
	for i, x := range calls {
		a := r.answerNode(x)
		if len(a.Content) != 2 || a.Content[0].Value != "text" || a.HeadComment != "" {
			return nil // not text alone: an error, progress, a delay, a note
		}
		var plain bool
		if texts[i], plain = textOf(x); !plain {
			return nil
		}
	}
	tmpl, ok := templateOver(texts, args)
	if !ok {
		return nil
	}
	a := newMap()
	a.set("text", strNode(tmpl))
	a.n.HeadComment = fmt.Sprintf("The %d recorded calls, each with other arguments, were answered as this renders them.", len(calls))
	return a.n
}

// textOf is the text of x's result when it is one text block and nothing
// else.
func textOf(x *exchange) (string, bool) {
	res, err := jsonNode(x.result)
	if err != nil || res.Kind != yaml.MappingNode || len(res.Content) != 2 {
		return "", false
	}
	return plainText(member(res, "content"))
}

// callArgs is a call's arguments as the script sees them: an object, {}
// when there were none; ok is false when they are not an object.
func callArgs(params json.RawMessage) (args map[string]any, ok bool) {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		return map[string]any{}, true
	}
	if json.Unmarshal(p.Arguments, &args) != nil || args == nil {
		return nil, false
	}
	return args, true
}

// sameOutcome says whether two calls were answered alike.
func sameOutcome(a, b *exchange) bool {
	return a.answered == b.answered && a.refused == b.refused && a.expired == b.expired && reflect.DeepEqual(a.header, b.header) && bytes.Equal(a.body, b.body) && jsonValueEqual(a.result, b.result) && jsonValueEqual(a.err, b.err) &&
		len(a.progress) == len(b.progress) && len(a.logs) == len(b.logs)
}

func jsonValueEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return jsonEqual(x, y)
}

// headersNode writes a refusal's headers, names sorted: one value as
// it is, several as a list.
func headersNode(h http.Header) *yaml.Node {
	m := newMap()
	for _, k := range sortedKeys(h) {
		if vs := h[k]; len(vs) == 1 {
			m.set(k, strNode(vs[0]))
		} else {
			items := make([]*yaml.Node, len(vs))
			for i, v := range vs {
				items[i] = strNode(v)
			}
			m.set(k, flow(seqNode(items...)))
		}
	}
	return flow(m.n)
}

// fallbackAnswer is an isError answer saying text: a tool's only answer
// when no call of it was recorded, or none loads, since a tool must have
// one.
func fallbackAnswer(text string) *yaml.Node {
	a := newMap()
	a.set("isError", boolNode(true))
	a.set("text", strNode(text))
	return a.n
}

// answerNode writes what the server did with one call, and with
// WithTiming how long it took.
func (r *recording) answerNode(x *exchange) *yaml.Node {
	n := answerContent(x)
	if !r.timing || !x.answered || x.sent.IsZero() {
		return n
	}
	last := x.answerFrom() // not the time the client took to reply
	if steps := member(n, "progress"); steps != nil {
		for i, step := range steps.Content { // a step per recorded notification
			setDelay(mapNode{step}, x.stepTimes[i].Sub(last))
			last = x.stepTimes[i]
		}
	}
	setDelay(mapNode{n}, x.done.Sub(last))
	return n
}

// setDelay sets m's delay to d, to the millisecond; nothing under 1ms.
func setDelay(m mapNode, d time.Duration) {
	if d = d.Round(time.Millisecond); d > 0 {
		m.set("delay", strNode(d.String()))
	}
}

// answerContent writes what the server did with one call.
func answerContent(x *exchange) *yaml.Node {
	a := newMap()
	if x.refused != 0 {
		if x.expired {
			a.set("fault", strNode("expire-session"))
			a.n.HeadComment = "Refused with HTTP 404 for its session while recording: the session was gone."
		} else {
			a.set("fault", strNode(fmt.Sprintf("http-%d", x.refused)))
			a.n.HeadComment = fmt.Sprintf("Refused with HTTP %d while recording.", x.refused)
		}
		if len(x.header) > 0 {
			a.set("headers", headersNode(x.header))
		}
		if x.body != nil {
			a.set("body", strNode(string(x.body))) // as text: its bytes, whatever its Content-Type
		}
		return a.n
	}
	if !x.answered {
		a.set("fault", strNode("hang"))
		a.n.HeadComment = "Never answered while recording."
		return a.n
	}
	if steps := progressSteps(x.progress); steps != nil {
		a.set("progress", steps)
	}
	if len(x.logs) > 0 {
		logs := seqNode()
		for _, p := range x.logs {
			l := pick(p, []string{"level", "logger", "data"})
			literalTemplateNode(member(l.n, "data"))
			logs.Content = append(logs.Content, flow(l.n))
		}
		a.set("log", logs)
	}
	if len(x.err) > 0 {
		if x.errStatus != 0 {
			a.set("fault", strNode(fmt.Sprintf("http-%d", x.errStatus)))
			a.n.HeadComment = fmt.Sprintf("Answered with HTTP %d while recording.", x.errStatus)
			if len(x.header) > 0 {
				a.set("headers", headersNode(x.header))
			}
		}
		a.set("error", errorNode(x.err))
		return a.n
	}
	res, err := jsonNode(x.result)
	if err != nil || res.Kind != yaml.MappingNode {
		a.set("isError", boolNode(true))
		a.set("text", strNode("the recorded result was not an object"))
		return a.n
	}
	content := member(res, "content")
	text, plain := plainText(content)
	switch {
	case plain:
		a.set("text", strNode(literalTemplate(text)))
	case content != nil && content.Kind == yaml.SequenceNode && len(content.Content) > 0:
		for _, block := range content.Content {
			literalTemplateNode(member(block, "text"))
			literalTemplateNode(member(member(block, "resource"), "text"))
		}
		a.set("content", content)
	}
	for _, k := range []string{"structuredContent", "isError", "_meta"} {
		a.set(k, member(res, k))
	}
	if len(a.n.Content) == 0 || (len(a.n.Content) == 2 && a.n.Content[0].Value == "progress") {
		// An empty result: the script has no empty answer, so say it.
		a.set("text", strNode(""))
		a.n.HeadComment = "The recorded result had no content."
	}
	return a.n
}

// plainText returns the text of content when it is one text block with
// nothing else, which the script writes as text.
func plainText(content *yaml.Node) (string, bool) {
	if content == nil || content.Kind != yaml.SequenceNode || len(content.Content) != 1 {
		return "", false
	}
	return textBlock(content.Content[0])
}

// textBlock returns the text of a content block that is a text block and
// nothing more (no annotations, no _meta).
func textBlock(b *yaml.Node) (string, bool) {
	if b == nil || b.Kind != yaml.MappingNode || len(b.Content) != 4 {
		return "", false
	}
	typ, text := member(b, "type"), member(b, "text")
	if typ == nil || typ.Value != "text" || text == nil || text.Kind != yaml.ScalarNode || text.Tag != "!!str" {
		return "", false
	}
	return text.Value, true
}

// progressSteps writes recorded progress notifications as steps; nil when
// they do not rise, or one has no progress, which a script requires.
func progressSteps(params []json.RawMessage) *yaml.Node {
	if len(params) == 0 {
		return nil
	}
	steps := seqNode()
	last := -1.0
	for _, p := range params {
		var v struct {
			Progress *float64 `json:"progress"`
		}
		if json.Unmarshal(p, &v) != nil || v.Progress == nil || *v.Progress <= last {
			return nil
		}
		last = *v.Progress
		s := pick(p, []string{"progress", "total", "message"})
		literalTemplateNode(member(s.n, "message"))
		steps.Content = append(steps.Content, flow(s.n))
	}
	return steps
}
