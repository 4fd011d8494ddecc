package script

import (
	"encoding/base64"
	"fmt"
)

// This file compiles the parts of a script around its tools: resources,
// prompts, and the events that change the sets during a session.

func (c *compiler) resource(r *Resource) *resource {
	if r.URI == "" {
		c.errorf(r.Pos, "a resource needs a uri")
	}
	if r.Name == "" {
		c.errorf(r.Pos, "a resource needs a name")
	}
	if r.Text != "" && r.Blob != "" {
		c.errorf(r.Pos, "give text or blob, not both")
	}
	if r.Blob != "" {
		if _, err := base64.StdEncoding.DecodeString(r.Blob); err != nil {
			c.errorf(sub(r.Pos, "blob"), "blob is not base64: %v", err)
		}
	}
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
	return &resource{uri: r.URI, def: mustJSON(def), contents: mustJSON(map[string]any{"contents": []any{content}})}
}

func (c *compiler) prompt(p *Prompt) *prompt {
	if p.Name == "" {
		c.errorf(p.Pos, "a prompt needs a name")
	}
	cp := &prompt{name: p.Name}
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
	for k, v := range map[string]Value{"icons": p.Icons, "_meta": p.Meta} {
		if v.Set {
			def[k] = v.V
		}
	}
	cp.def = mustJSON(def)
	cp.messages = c.messages(p.Messages, "a prompt message")
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

func (c *compiler) events(evs []Event, tools, uris, prompts map[string]Pos, defaultInvalid bool) {
	// Names any event may refer to: the initial ones and every added one.
	known := map[string]bool{}
	for n := range tools {
		known[n] = true
	}
	removed := map[string]bool{}
	for _, e := range evs {
		for _, t := range e.AddTools {
			known[t.Name] = true
		}
		for _, n := range e.RemoveTools {
			removed[n] = true
		}
	}
	for i := range evs {
		e := &evs[i]
		ce := &event{tool: e.After.Tool, calls: e.After.Calls, requests: e.After.Requests}
		tp := e.After.Pos
		switch {
		case e.After.Requests > 0 && (e.After.Tool != "" || e.After.Calls != 0):
			c.errorf(tp, "after: give requests, or tool and calls, not both")
		case e.After.Requests > 0:
		case e.After.Tool == "" || e.After.Calls < 1:
			c.errorf(tp, "after needs requests: N (N ≥ 1), or tool: NAME with calls: N (N ≥ 1)")
		case !known[e.After.Tool]:
			c.errorf(sub(tp, "tool"), "no tool %q in the script", e.After.Tool)
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
				c.errorf(sub(t.Pos, "name"), "no tool %q to replace", t.Name)
			}
			if seen[t.Name] {
				c.errorf(t.Pos, "duplicate tool name %q in this event", t.Name)
			}
			seen[t.Name] = true
			ce.replaceTools = append(ce.replaceTools, c.tool(&t, defaultInvalid))
		}
		for j, n := range e.RemoveTools {
			if !known[n] {
				rp := sub(e.Pos, "removeTools")
				c.errorf(Pos{Line: rp.Line, Col: rp.Col, Path: fmt.Sprintf("%s.removeTools[%d]", e.Path, j)}, "no tool %q to remove", n)
			}
		}
		ce.removeTools = e.RemoveTools
		for _, r := range e.AddResources {
			ce.addResources = append(ce.addResources, c.resource(&r))
		}
		ce.removeResources = e.RemoveResources
		for _, p := range e.AddPrompts {
			ce.addPrompts = append(ce.addPrompts, c.prompt(&p))
		}
		ce.removePrompts = e.RemovePrompts
		c.s.events = append(c.s.events, ce)
	}
}
