package script

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// This file is what FromTape learns of the questions a recorded server put
// to its client during a tools/call, prompts/get or resources/read
// (asks.go): an elicitation, a sampling request, roots/list. In the
// handshake era they are requests the server sent mid-call, each answered
// by the client; in 2026-07-28 they are the inputRequests of an
// input_required first round, answered by the retry's inputResponses.
// Either way the tool, prompt or resource gets an elicit, sample or roots,
// and its answers are chosen by the user's elicited action (and a tool's
// by its arguments too), since the server's answer depended on it.

// recordedAsk is one question put to the client during a request.
type recordedAsk struct {
	kind   askKind
	params json.RawMessage
	reply  json.RawMessage // the client's result; nil: an error, or none
	at     time.Time       // when the client replied (zero: not known)
	// complete: the server sent notifications/elicitation/complete for
	// this url-mode elicitation before it answered.
	complete bool
}

// askKinds in the order a script asks them.
var askKinds = []askKind{elicitKind, sampleKind, rootsKind}

func askKindOf(method string) (askKind, bool) {
	for _, k := range askKinds {
		if k.method == method {
			return k, true
		}
	}
	return askKind{}, false
}

// ask returns the call's question of kind k, or nil.
func (x *exchange) ask(k askKind) *recordedAsk {
	for _, a := range x.asks {
		if a.kind == k {
			return a
		}
	}
	return nil
}

// elicitedAction is the user's reply to the call's elicitation: accept,
// decline or cancel; "" when none was asked or the reply had none.
func (x *exchange) elicitedAction() string {
	a := x.ask(elicitKind)
	if a == nil {
		return ""
	}
	var reply struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(a.reply, &reply) != nil {
		return ""
	}
	return reply.Action
}

// answerFrom is when the server could start its answer: once the client
// had replied to its last question, or when the call was sent.
func (x *exchange) answerFrom() time.Time {
	from := x.sent
	for _, a := range x.asks {
		if a.at.After(from) {
			from = a.at
		}
	}
	return from
}

// askedDuring returns the call among inflight that a server request or
// notification sent on stream belongs to: the call whose POST's stream
// carried it, else the only call in flight; nil if that is not certain.
func askedDuring(inflight []*exchange, stream uint64) *exchange {
	if stream != 0 {
		for _, x := range inflight {
			if x.stream == stream {
				return x
			}
		}
	}
	if len(inflight) == 1 {
		return inflight[0]
	}
	return nil
}

// firstRound is a 2026-07-28 call's input_required result: the questions
// its retry answers, by their key among inputRequests.
type firstRound map[string]struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// noteFirstRound keeps the questions of an input_required answer to x for
// the retry of the same tool, prompt or resource: in the same session,
// or in any, when the answer gave a requestState for the retry to echo
// (2026-07-28 over HTTP is recorded one session per connection, and a
// client may retry on another).
func (r *recording) noteFirstRound(x *exchange) {
	var res struct {
		InputRequests firstRound      `json:"inputRequests"`
		RequestState  json.RawMessage `json:"requestState"`
	}
	if json.Unmarshal(x.result, &res) != nil || len(res.InputRequests) == 0 {
		return
	}
	r.firstRounds[x.session+"\x00"+x.askerKey()] = res.InputRequests
	if len(res.RequestState) > 0 {
		r.firstRounds[stateKey(x, res.RequestState)] = res.InputRequests
	}
}

// stateKey is where noteFirstRound keeps a first round whose answer gave
// requestState, for a retry of x's tool, prompt or resource echoing it.
func stateKey(x *exchange, state json.RawMessage) string {
	return "state\x00" + x.askerKey() + "\x00" + string(state)
}

// askerKey names what x asks of: a tool, a prompt or a resource.
func (x *exchange) askerKey() string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(x.params, &p)
	if x.method == "resources/read" {
		return x.method + "\x00" + p.URI
	}
	return x.method + "\x00" + p.Name
}

// noteAsker keeps an answered prompts/get or resources/read, for the
// elicit, sample or roots of its prompt or resource, and for the answers
// its user's elicited action chose. In 2026-07-28 the first round only
// keeps the questions for the retry, and says it was one.
func (r *recording) noteAsker(x *exchange) (firstRound bool) {
	if len(x.result) > 0 && jsonrpc.AsksForInput(x.result) {
		r.noteFirstRound(x)
		return true
	}
	r.takeFirstRound(x)
	if len(x.result) > 0 || len(x.err) > 0 {
		k := x.askerKey()
		r.askers[k] = append(r.askers[k], x)
	}
	return false
}

// elicits says whether fields (from askFields) hold an elicit.
func elicits(fields []*yaml.Node) bool {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i].Value == elicitKind.field {
			return true
		}
	}
	return false
}

// answersByAction writes, for each elicited action the recorded requests
// xs got in reply, an answer chosen by it ({when: {elicited: {action}}})
// that body fills from the first request with that reply; nil if none
// had one.
func answersByAction(xs []*exchange, body func(x *exchange, answer mapNode)) *yaml.Node {
	list := seqNode()
	seen := map[string]bool{}
	for _, x := range xs {
		action := x.elicitedAction()
		if action == "" || seen[action] {
			continue
		}
		seen[action] = true
		a := withElicited(newMap().n, action)
		body(x, mapNode{a})
		list.Content = append(list.Content, a)
	}
	if len(list.Content) == 0 {
		return nil
	}
	return list
}

// errorNode writes a recorded JSON-RPC error as an answer's error.
func errorNode(raw json.RawMessage) *yaml.Node {
	e := pick(raw, []string{"code", "message", "data"})
	literalTemplateNode(member(e.n, "message"))
	return e.n
}

// takeFirstRound gives a retry x the questions its first round asked and
// the replies it carries in inputResponses.
func (r *recording) takeFirstRound(x *exchange) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage            `json:"requestState"`
	}
	if json.Unmarshal(x.params, &p) != nil || p.InputResponses == nil {
		return
	}
	key := x.session + "\x00" + x.askerKey()
	if len(p.RequestState) > 0 {
		if _, ok := r.firstRounds[stateKey(x, p.RequestState)]; ok {
			key = stateKey(x, p.RequestState) // the very round it answers
		}
	}
	round, ok := r.firstRounds[key]
	if !ok {
		return
	}
	delete(r.firstRounds, key)
	// The keys are the server's to choose (mcpmock names them by kind):
	// the method says what was asked.
	for _, id := range sortedKeys(round) {
		q := round[id]
		k, ok := askKindOf(q.Method)
		if !ok || x.ask(k) != nil {
			continue
		}
		a := &recordedAsk{kind: k, params: q.Params, at: x.sent}
		if reply := p.InputResponses[id]; isObject(reply) {
			a.reply = reply
		}
		x.asks = append(x.asks, a)
	}
	slices.SortStableFunc(x.asks, func(a, b *recordedAsk) int {
		return slices.Index(askKinds, a.kind) - slices.Index(askKinds, b.kind)
	})
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// askFields writes what a tool's recorded calls asked the client, as the
// tool's elicit, sample and roots, each as its first asking call asked
// it, or as a template over the arguments that renders what every call
// asked. An ask that does not load as a script is left out, with a note.
func (r *recording) askFields(calls []*exchange) (fields []*yaml.Node, notes []string) {
	calls = slices.SortedFunc(slices.Values(calls), func(a, b *exchange) int { return a.order - b.order })
	for _, k := range askKinds {
		var asks []*recordedAsk
		var args []map[string]any
		var where []string
		for _, x := range calls {
			if a := x.ask(k); a != nil {
				asks = append(asks, a)
				xargs, _ := callArgs(x.params)
				args = append(args, xargs)
				where = append(where, fmt.Sprintf("%s seq %d", x.session, x.seq))
			}
		}
		if len(asks) == 0 {
			continue
		}
		var n *yaml.Node
		same := true
		switch k {
		case rootsKind:
			n = boolNode(true)
		case elicitKind:
			n, same = elicitNode(asks, args)
		case sampleKind:
			n, same = sampleNode(asks, args)
		}
		probe := newMap()
		probe.set("name", strNode("probe"))
		probe.set(k.field, n)
		probe.set("answers", seqNode(fallbackAnswer("probe")))
		if err := loadsAs("tools", probe.n); err != nil {
			notes = append(notes, fmt.Sprintf("Its recorded %s (%s) is left out: %s", k.field, where[0], firstLine(err.Error())))
			continue
		}
		if !same {
			notes = append(notes, fmt.Sprintf("Its calls were not all asked the same %s: it asks as the first did (%s).", k.field, where[0]))
		}
		fields = append(fields, strNode(k.field), n)
	}
	return fields, notes
}

// elicitNode writes recorded elicitations as one elicit; same is false
// when no template over the arguments renders every one of them.
func elicitNode(asks []*recordedAsk, args []map[string]any) (n *yaml.Node, same bool) {
	type elicitation struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		URL             string          `json:"url"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	all := decodeParams[elicitation](asks)
	first := all[0]
	same = true
	m := newMap()
	if first.Mode == "url" {
		m.set("mode", strNode("url"))
	}
	message, ok := templateOver(pluck(all, func(e elicitation) string { return e.Message }), args)
	same = same && ok
	m.set("message", strNode(message))
	if first.Mode == "url" {
		url, ok := templateOver(pluck(all, func(e elicitation) string { return e.URL }), args)
		same = same && ok
		m.set("url", strNode(url))
		if asks[0].complete {
			m.set("complete", boolNode(true))
		}
		return m.n, same
	}
	schema, err := jsonNode(first.RequestedSchema)
	if err == nil {
		m.set("requestedSchema", schema)
	}
	m.n.Content = append(m.n.Content, pick(asks[0].params, []string{"task"}).n.Content...)
	for _, e := range all[1:] {
		same = same && jsonValueEqual(e.RequestedSchema, first.RequestedSchema)
	}
	return m.n, same
}

// sampleNode writes recorded sampling requests as one sample; same is
// false when no template over the arguments renders every one of them.
func sampleNode(asks []*recordedAsk, args []map[string]any) (n *yaml.Node, same bool) {
	type sampling struct {
		Messages     []json.RawMessage `json:"messages"`
		SystemPrompt string            `json:"systemPrompt"`
	}
	all := decodeParams[sampling](asks)
	first := all[0]
	same = true
	m := newMap()
	msgs := seqNode()
	for i, raw := range first.Messages {
		msg := promptMessage(raw)
		// A text message may differ from call to call by an argument.
		texts := make([]string, len(all))
		templated := member(msg, "text") != nil
		for j, s := range all {
			var block struct {
				Content struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			}
			if i >= len(s.Messages) || json.Unmarshal(s.Messages[i], &block) != nil || block.Content.Type != "text" {
				templated = false
				break
			}
			texts[j] = block.Content.Text
		}
		if templated {
			text, ok := templateOver(texts, args)
			same = same && ok
			member(msg, "text").Value = text
		}
		msgs.Content = append(msgs.Content, msg)
	}
	m.set("messages", msgs)
	if first.SystemPrompt != "" {
		prompt, ok := templateOver(pluck(all, func(s sampling) string { return s.SystemPrompt }), args)
		same = same && ok
		m.set("systemPrompt", strNode(prompt))
	}
	rest := []string{"maxTokens", "temperature", "stopSequences", "modelPreferences", "includeContext", "_meta", "task"}
	m.n.Content = append(m.n.Content, pick(asks[0].params, rest[:len(rest)-1]).n.Content...)
	m.n.Content = append(m.n.Content, pick(asks[0].params, rest[len(rest)-1:]).n.Content...) // task last, as in a script
	var firstRest map[string]json.RawMessage
	_ = json.Unmarshal(asks[0].params, &firstRest)
	for i, s := range all[1:] {
		var other map[string]json.RawMessage
		_ = json.Unmarshal(asks[i+1].params, &other)
		same = same && len(s.Messages) == len(first.Messages)
		for _, k := range rest {
			same = same && jsonValueEqual(other[k], firstRest[k])
		}
	}
	return m.n, same
}

// decodeParams decodes each ask's params as far as they fit a T.
func decodeParams[T any](asks []*recordedAsk) []T {
	all := make([]T, len(asks))
	for i, a := range asks {
		_ = json.Unmarshal(a.params, &all[i])
	}
	return all
}

func pluck[T any](all []T, f func(T) string) []string {
	out := make([]string, len(all))
	for i, v := range all {
		out[i] = f(v)
	}
	return out
}

// templateOver writes a template that renders texts[i] from the
// arguments args[i] of each call: texts[0] as it is, when they are all
// the same, or with one string argument's value in it replaced by that
// argument, when that renders every one of them. Else it writes texts[0]
// as it is, and ok is false.
func templateOver(texts []string, args []map[string]any) (tmpl string, ok bool) {
	if !slices.ContainsFunc(texts, func(s string) bool { return s != texts[0] }) {
		return literalTemplate(texts[0]), true
	}
	for _, name := range sortedKeys(args[0]) {
		v0, _ := args[0][name].(string)
		if v0 == "" || !strings.Contains(texts[0], v0) {
			continue
		}
		pieces := strings.Split(texts[0], v0)
		renders := true
		for i, text := range texts {
			v, isString := args[i][name].(string)
			if !isString || strings.Join(pieces, v) != text {
				renders = false
				break
			}
		}
		if !renders {
			continue
		}
		for i, p := range pieces {
			pieces[i] = literalTemplate(p)
		}
		return strings.Join(pieces, argTemplate(name)), true
	}
	return literalTemplate(texts[0]), false
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// argTemplate is the template action that writes argument name.
func argTemplate(name string) string {
	if identifier.MatchString(name) {
		return "{{.args." + name + "}}"
	}
	return "{{index .args " + string(mustJSON(name)) + "}}"
}
