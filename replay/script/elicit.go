package script

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
)

// This file is an elicit: a form a tool, prompt or resource puts to the
// client (its user) before it answers (see asks.go for how each era asks).

type elicitForm struct {
	message *template.Template
	schema  map[string]any
	url     *template.Template // url mode: where to send the user; nil in form mode
	// complete: url mode, and notifications/elicitation/complete is sent
	// once the user has accepted.
	complete bool
}

func (c *compiler) elicit(e *Elicit) *elicitForm {
	f := &elicitForm{}
	if e.Message == "" {
		c.errorf(e.Pos, "elicit needs a message")
	} else {
		f.message = c.template(sub(e.Pos, "message"), e.Message)
	}
	switch e.Mode {
	case "", "form":
		if e.URL != "" {
			c.errorf(sub(e.Pos, "url"), "url is for mode: url; a form asks with requestedSchema")
		}
		if e.Complete {
			c.errorf(sub(e.Pos, "complete"), "complete is for mode: url, where the user finishes on a page")
		}
	case "url":
		if e.URL == "" {
			c.errorf(e.Pos, "elicit in mode url needs a url: where to send the user")
		} else {
			f.url = c.template(sub(e.Pos, "url"), e.URL)
		}
		if e.RequestedSchema.Set {
			c.errorf(sub(e.Pos, "requestedSchema"), "mode url asks for no fields: leave out requestedSchema")
		}
		f.complete = e.Complete
		return f
	default:
		c.errorf(sub(e.Pos, "mode"), "mode must be form or url, got %q", e.Mode)
		return f
	}
	if !e.RequestedSchema.Set {
		c.errorf(e.Pos, "elicit needs a requestedSchema: the form's fields")
		return f
	}
	v := e.RequestedSchema
	m, ok := v.V.(map[string]any)
	if !ok {
		c.errorf(v.Pos, "requestedSchema must be a mapping")
		return f
	}
	if m["type"] != "object" {
		c.errorf(v.Pos, "requestedSchema must have type: object")
	}
	props, _ := m["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		if problem := formFieldProblem(props[name]); problem != "" {
			c.errorf(sub(sub(v.Pos, "properties"), name), "%s: a form asks only for strings, numbers, integers, booleans and enums, not nested values", problem)
		}
	}
	c.formRequired(v, props)
	c.schema(v, false) // it must compile too
	f.schema = m
	return f
}

// formRequired refuses a form whose required names a field it does not
// define: no reply could then pass, and the user would be asked for
// nothing they can give.
func (c *compiler) formRequired(v Value, props map[string]any) {
	req, ok := v.V.(map[string]any)["required"].([]any)
	if !ok {
		return
	}
	nodes := member(resolve(v.node), "required")
	for i, r := range req {
		name, isString := r.(string)
		if _, defined := props[name]; isString && defined {
			continue
		}
		pos := sub(v.Pos, "required")
		pos.Path = fmt.Sprintf("%s[%d]", pos.Path, i)
		if nodes = resolve(nodes); nodes != nil && nodes.Kind == yaml.SequenceNode && i < len(nodes.Content) {
			pos = at(resolve(nodes.Content[i]), pos.Path)
		}
		if !isString {
			c.errorf(pos, "required lists field names, got %v", r)
			continue
		}
		fields := cmp.Or(strings.Join(sortedKeys(props), ", "), "none")
		c.errorf(pos, "required names %q, which the form does not define (fields: %s): no reply could pass", name, fields)
	}
}

// formFieldProblem says what keeps prop from being a form field (the
// spec's PrimitiveSchemaDefinition, and 2025-11-25's multi-select enum:
// an array of strings), "" when nothing does.
func formFieldProblem(prop any) string {
	p, ok := prop.(map[string]any)
	if !ok {
		return "a property must be a mapping"
	}
	switch typ := p["type"]; typ {
	case "string", "number", "integer", "boolean":
		return ""
	case "array":
		items, _ := p["items"].(map[string]any)
		if items["type"] == "string" || items["anyOf"] != nil {
			return ""
		}
		return "an array property must be of strings (a multi-select enum)"
	default:
		return fmt.Sprintf("type %v", typ)
	}
}

// params renders the elicitation/create params for one call. In url
// mode the elicitationId is made from the tool and its arguments, so that
// every run says the same (a 2026-07-28 input request leaves it out:
// inputRequired).
func (f *elicitForm) params(data map[string]any) (json.RawMessage, error) {
	msg, err := render(f.message, data)
	if err != nil {
		return nil, err
	}
	if f.url == nil {
		return mustJSON(map[string]any{"message": msg, "requestedSchema": f.schema}), nil
	}
	url, err := render(f.url, data)
	if err != nil {
		return nil, err
	}
	return mustJSON(map[string]any{"mode": "url", "message": msg, "url": url, "elicitationId": elicitationID(data)}), nil
}

// elicitationID names a url-mode elicitation by the call's tool and
// arguments (the prompt and arguments of a prompts/get, the uri of a
// resources/read).
func elicitationID(data map[string]any) string {
	key := []any{data["tool"], data["args"]}
	if name, ok := data["prompt"]; ok {
		key = []any{"prompt", name, data["args"]}
	} else if uri, ok := data["uri"]; ok {
		key = []any{"resource", uri}
	}
	h := fnv.New64a()
	h.Write(mustJSON(key))
	return fmt.Sprintf("mcpmock-%x", h.Sum64())
}

// clientMode is the member of the client's elicitation capability the
// form needs: "url" for url mode; "" for a form, which any client that
// can be asked at all takes (before 2025-11-25, {} meant a form).
func (f *elicitForm) clientMode() string {
	if f.url != nil {
		return "url"
	}
	return ""
}
