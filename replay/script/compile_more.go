package script

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/internal/suggest"
)

// This file compiles the parts of a script around its tools: resources,
// prompts (with what they ask first and their answers), and the events
// that change the sets during a session.

func (c *compiler) resource(r *Resource) *resource {
	if r.URI == "" {
		c.errorf(r.Pos, "a resource needs a uri")
	} else if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
		// The spec's uri is a URI (RFC 3986), which has a scheme; a
		// client may refuse a list with a bare path in it.
		c.errorf(sub(r.Pos, "uri"), "uri %q is not an absolute URI: give it a scheme (file:///%s, or one of your own: docs://%s)", r.URI, strings.TrimPrefix(r.URI, "/"), strings.TrimPrefix(r.URI, "/"))
	}
	if r.Name == "" {
		c.errorf(r.Pos, "a resource needs a name")
	}
	if r.Text != "" && r.Blob != "" {
		c.errorf(r.Pos, "give text or blob, not both")
	}
	if len(r.Answers) > 0 && (r.Text != "" || r.Blob != "") {
		c.errorf(sub(r.Pos, "answers"), "give text or blob, or answers, not both")
	}
	c.base64(r.Blob, sub(r.Pos, "blob"))
	def := map[string]any{"uri": r.URI, "name": r.Name}
	content := map[string]any{"uri": r.URI}
	for k, v := range map[string]string{"title": r.Title, "description": r.Description, "mimeType": r.MimeType} {
		if v != "" {
			def[k] = v
		}
	}
	if r.MimeType != "" {
		content["mimeType"] = r.MimeType
	}
	if r.Blob != "" {
		content["blob"] = r.Blob
	} else {
		content["text"] = r.Text
	}
	for k, v := range map[string]Value{"annotations": r.Annotations, "icons": r.Icons, "_meta": r.Meta} {
		if v.Set {
			def[k] = v.V
		}
	}
	cr := &resource{uri: r.URI, def: mustJSON(def), contents: mustJSON(map[string]any{"contents": []any{content}}), mimeType: r.MimeType}
	cr.asks, cr.completes = c.asks(r.Elicit, r.Sample, r.Roots)
	for i := range r.Answers {
		cr.answers = append(cr.answers, c.resourceAnswer(&r.Answers[i], cr.asks))
	}
	c.unreachable(len(r.Answers), func(i int) (Pos, bool) { return r.Answers[i].Pos, r.Answers[i].When != nil })
	return cr
}

func (c *compiler) resourceAnswer(a *ResourceAnswer, asks []*ask) *resourceAnswer {
	ca := &resourceAnswer{at: a.Pos, blob: a.Blob}
	if w := a.When; w != nil {
		if w.Exact.Set || w.Subset.Set || len(w.Regex) > 0 {
			c.errorf(w.Pos, "a resource is read without arguments: when takes elicited or sampled")
		}
		ca.matcher = c.when(w, "resource", asks)
	}
	switch n := btoi(a.Text != "") + btoi(a.Blob != "") + btoi(a.Error != nil); {
	case n == 0:
		c.errorf(a.Pos, "an answer of a resource needs text, blob or error")
	case n > 1:
		c.errorf(a.Pos, "give one of text, blob or error")
	}
	if a.Text != "" {
		ca.text = c.template(sub(a.Pos, "text"), a.Text)
	}
	c.base64(a.Blob, sub(a.Pos, "blob"))
	if a.Error != nil {
		ca.err = c.rpcErr(a.Error)
	}
	return ca
}

func (c *compiler) base64(blob string, p Pos) {
	if blob == "" {
		return
	}
	if _, err := base64.StdEncoding.DecodeString(blob); err != nil {
		c.errorf(p, "blob is not base64: %v", err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *compiler) prompt(p *Prompt) *prompt {
	if p.Name == "" {
		c.errorf(p.Pos, "a prompt needs a name")
	}
	cp := &prompt{name: p.Name, complete: map[string]*completer{}}
	def := map[string]any{"name": p.Name}
	for k, v := range map[string]string{"title": p.Title, "description": p.Description} {
		if v != "" {
			def[k] = v
		}
	}
	var args []any
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a.Name == "" || seen[a.Name] {
			c.errorf(a.Pos, "a prompt argument needs a unique name")
		}
		seen[a.Name] = true
		cp.args = append(cp.args, a.Name)
		m := map[string]any{"name": a.Name}
		if a.Title != "" {
			m["title"] = a.Title
		}
		if a.Description != "" {
			m["description"] = a.Description
		}
		if a.Required {
			m["required"] = true
			cp.required = append(cp.required, a.Name)
		}
		args = append(args, m)
	}
	if args != nil {
		def["arguments"] = args
	}
	for _, a := range p.Arguments {
		if a.Complete != nil {
			cp.complete[a.Name] = c.complete(a.Complete, fmt.Sprintf("prompt %q", p.Name), a.Name, cp.args)
		}
	}
	for k, v := range map[string]Value{"icons": p.Icons, "_meta": p.Meta} {
		if v.Set {
			def[k] = v.V
		}
	}
	cp.def = mustJSON(def)
	cp.messages = c.messages(p.Messages, "a prompt message")
	cp.asks, cp.completes = c.asks(p.Elicit, p.Sample, p.Roots)
	if len(p.Answers) > 0 && len(p.Messages) > 0 {
		c.errorf(sub(p.Pos, "answers"), "give messages or answers, not both")
	}
	for i := range p.Answers {
		a := &p.Answers[i]
		ca := &promptAnswer{at: a.Pos}
		if a.When != nil {
			ca.matcher = c.when(a.When, "prompt", cp.asks)
		}
		switch {
		case a.Error != nil && len(a.Messages) > 0:
			c.errorf(sub(a.Pos, "error"), "a JSON-RPC error cannot also carry messages")
		case a.Error != nil:
			ca.err = c.rpcErr(a.Error)
		case len(a.Messages) == 0:
			c.errorf(a.Pos, "an answer of a prompt needs messages or error")
		}
		ca.messages = c.messages(a.Messages, "a prompt message")
		cp.answers = append(cp.answers, ca)
	}
	c.unreachable(len(p.Answers), func(i int) (Pos, bool) { return p.Answers[i].Pos, p.Answers[i].When != nil })
	return cp
}

// messages compiles the messages of a prompt or of a sample; what names
// one in errors.
func (c *compiler) messages(msgs []PromptMsg, what string) []promptMsg {
	var out []promptMsg
	for _, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			c.errorf(sub(m.Pos, "role"), "role must be user or assistant, got %q", m.Role)
		}
		pm := promptMsg{role: m.Role}
		switch {
		case m.Text != "" && m.Content.Set:
			c.errorf(m.Pos, "give text or content, not both")
		case m.Text != "":
			pm.text = c.template(sub(m.Pos, "text"), m.Text)
		case m.Content.Set:
			c.block(m.Content, "content")
			pm.content = m.Content.V
		default:
			c.errorf(m.Pos, "%s needs text or content", what)
		}
		out = append(out, pm)
	}
	return out
}

func (c *compiler) events(evs []Event, tools, uris, prompts, templates map[string]Pos, defaultInvalid bool) {
	// Names any event may refer to: the initial ones and every added one,
	// by an event written before it or after it (events fire as their
	// triggers come, not in the order written). Resource URIs, prompt
	// names and URI templates that an event removes are held to the same
	// rule.
	known, knownURIs, knownPrompts, knownTemplates := keysOf(tools), keysOf(uris), keysOf(prompts), keysOf(templates)
	removed := map[string]bool{}
	for _, e := range evs {
		for _, t := range e.AddTools {
			known[t.Name] = true
		}
		for _, n := range e.RemoveTools {
			removed[n] = true
		}
		for _, r := range e.AddResources {
			knownURIs[r.URI] = true
		}
		for _, p := range e.AddPrompts {
			knownPrompts[p.Name] = true
		}
		for _, rt := range e.AddResourceTemplates {
			knownTemplates[rt.URITemplate] = true
		}
	}
	for i := range evs {
		e := &evs[i]
		ce := &event{tool: e.After.Tool, calls: e.After.Calls, requests: e.After.Requests}
		tp := e.After.Pos
		if _, written := e.fields["after"]; !written {
			tp = sub(e.Pos, "after") // at the event, which has none
		}
		switch {
		case e.After.Requests > 0 && (e.After.Tool != "" || e.After.Calls != 0):
			c.errorf(tp, "after: give requests, or tool and calls, not both")
		case e.After.Requests > 0:
		case e.After.Tool == "" || e.After.Calls < 1:
			c.errorf(tp, "after needs requests: N (N ≥ 1), or tool: NAME with calls: N (N ≥ 1)")
		case !known[e.After.Tool]:
			c.errorf(sub(tp, "tool"), "no tool %q in the script%s", e.After.Tool, known.meant(e.After.Tool))
		}
		seen := map[string]bool{}
		for _, t := range e.AddTools {
			if _, initial := tools[t.Name]; initial && !removed[t.Name] {
				c.errorf(t.Pos, "tool %q already exists; use replaceTools", t.Name)
			}
			if seen[t.Name] {
				c.errorf(t.Pos, "duplicate tool name %q in this event", t.Name)
			}
			seen[t.Name] = true
			ce.addTools = append(ce.addTools, c.tool(&t, defaultInvalid))
		}
		for _, t := range e.ReplaceTools {
			if !known[t.Name] {
				c.errorf(sub(t.Pos, "name"), "no tool %q to replace%s", t.Name, known.meant(t.Name))
			}
			if seen[t.Name] {
				c.errorf(t.Pos, "duplicate tool name %q in this event", t.Name)
			}
			seen[t.Name] = true
			ce.replaceTools = append(ce.replaceTools, c.tool(&t, defaultInvalid))
		}
		c.removals(e, "removeTools", "tool", e.RemoveTools, known)
		ce.removeTools = e.RemoveTools
		ce.addResources = addedOnce(c, e.AddResources, "resource uri", func(r *Resource) (string, Pos) { return r.URI, r.Pos }, c.resource)
		c.removals(e, "removeResources", "resource", e.RemoveResources, knownURIs)
		ce.removeResources = e.RemoveResources
		ce.addPrompts = addedOnce(c, e.AddPrompts, "prompt name", func(p *Prompt) (string, Pos) { return p.Name, p.Pos }, c.prompt)
		c.removals(e, "removePrompts", "prompt", e.RemovePrompts, knownPrompts)
		ce.removePrompts = e.RemovePrompts
		ce.addTemplates = addedOnce(c, e.AddResourceTemplates, "resource template", func(rt *ResourceTemplate) (string, Pos) { return rt.URITemplate, rt.Pos }, c.resourceTemplate)
		c.removals(e, "removeResourceTemplates", "resource template", e.RemoveResourceTemplates, knownTemplates)
		ce.removeTemplates = e.RemoveResourceTemplates
		c.s.events = append(c.s.events, ce)
	}
}

// addedOnce compiles the items an event adds (resources, prompts,
// templates), refusing a second with the key of one before it: adding a
// listed item replaces it, so the first of two would never be seen.
func addedOnce[In, Out any](c *compiler, items []In, what string, keyOf func(*In) (string, Pos), compile func(*In) Out) []Out {
	seen := map[string]bool{}
	var out []Out
	for i := range items {
		key, at := keyOf(&items[i])
		if seen[key] {
			c.errorf(at, "duplicate %s %q in this event", what, key)
		}
		seen[key] = true
		out = append(out, compile(&items[i]))
	}
	return out
}

// scriptKeys are the keys of one kind (tool names, resource URIs, prompt
// names) that a script lists at some point.
type scriptKeys map[string]bool

func keysOf(m map[string]Pos) scriptKeys {
	k := scriptKeys{}
	for n := range m {
		k[n] = true
	}
	return k
}

// meant is the end of an error about typed, a key not among k: the
// nearest key, if one is near.
func (k scriptKeys) meant(typed string) string {
	return suggest.DidYouMean(typed, slices.Sorted(maps.Keys(k)), "%q")
}

// removals refuses the keys an event's field (removeTools, …) names
// that the script never lists: removing one changes nothing, so it is a
// typo or a leftover, as a misspelt key elsewhere would be.
func (c *compiler) removals(e *Event, field, kind string, keys []string, known scriptKeys) {
	for j, n := range keys {
		if !known[n] {
			rp := sub(e.Pos, field)
			c.errorf(Pos{Line: rp.Line, Col: rp.Col, Path: fmt.Sprintf("%s.%s[%d]", e.Path, field, j)}, "no %s %q to remove%s", kind, n, known.meant(n))
		}
	}
}

// paramHeaders refuses x-mcp-header marks that break 2026-07-28's rules
// (a name that is no HTTP token or repeats another, a property of a type
// other than integer, string or boolean, a mark not reached through
// properties alone): a client must drop such a tool from the list, and
// go-sdk's does so without a word, so the tool would just be missing.
func (c *compiler) paramHeaders(in Value) {
	_, err := mcphttp.ParamHeaders(mustJSON(in.V))
	if err == nil {
		return
	}
	pos := in.Pos
	for _, m := range headerMarks(in.node, nil, in.Path) {
		if strings.HasPrefix(err.Error(), m.where+":") {
			pos = m.pos
			break
		}
	}
	c.errorf(pos, "%v (the spec's rule for Mcp-Param-* headers; a client drops a tool that breaks it)", err)
}

type headerMark struct {
	where string // as mcphttp names it: "the schema root", "property a.b"
	pos   Pos
}

// headerMarks finds the x-mcp-header members under the schema read from
// n, each named by its path of property names as mcphttp names it.
func headerMarks(n *yaml.Node, props []string, path string) []headerMark {
	n = resolve(n)
	var out []headerMark
	switch {
	case n == nil:
	case n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			out = append(out, headerMarks(e, props, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			switch k {
			case "x-mcp-header":
				where := "the schema root"
				if len(props) > 0 {
					where = "property " + strings.Join(props, ".")
				}
				out = append(out, headerMark{where, at(resolve(v), join(path, k))})
			case "const", "enum", "default", "examples":
			case "properties":
				if v = resolve(v); v != nil && v.Kind == yaml.MappingNode {
					for j := 0; j+1 < len(v.Content); j += 2 {
						name := v.Content[j].Value
						p := append(slices.Clone(props), name)
						out = append(out, headerMarks(v.Content[j+1], p, join(join(path, k), name))...)
					}
				}
			default:
				out = append(out, headerMarks(v, props, join(path, k))...)
			}
		}
	}
	return out
}
