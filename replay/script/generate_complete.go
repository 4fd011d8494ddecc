package script

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file turns recorded completion/complete exchanges into the
// complete of prompt arguments and resource template variables, and
// recorded resources/templates/list answers into resourceTemplates.

// completionKey is what a completion completes: a prompt's argument or a
// resource template's variable.
type completionKey struct {
	ref  string // "ref/prompt" or "ref/resource"
	name string // the prompt's name or the template's uri
	arg  string
}

// recordedCompletion is one answered completion/complete.
type recordedCompletion struct {
	args    map[string]any // the context's arguments, and the one completed at its value
	values  []string
	total   *int
	hasMore bool
}

// noteCompletion keeps an answered completion/complete.
func (r *recording) noteCompletion(x *exchange) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"context"`
	}
	var res struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	if json.Unmarshal(x.params, &p) != nil || json.Unmarshal(x.result, &res) != nil || p.Argument.Name == "" {
		return
	}
	key := completionKey{ref: p.Ref.Type, name: p.Ref.Name, arg: p.Argument.Name}
	if p.Ref.Type == "ref/resource" {
		key.name = p.Ref.URI
	}
	args := maps.Clone(p.Context.Arguments)
	if args == nil {
		args = map[string]any{}
	}
	args[p.Argument.Name] = p.Argument.Value
	c := res.Completion
	if r.completions == nil {
		r.completions = map[completionKey][]recordedCompletion{}
	}
	r.completions[key] = append(r.completions[key], recordedCompletion{args: args, values: c.Values, total: c.Total, hasMore: c.HasMore})
	if !slices.Contains(r.completionOrder, key) {
		r.completionOrder = append(r.completionOrder, key)
	}
}

// completeNode writes the recorded completions of one argument as
// answers, one per set of arguments (the first answer recorded for
// them), when over the arguments its owner has (known): a when over any
// other would never match, and refuses the script.
func completeNode(recorded []recordedCompletion, known []string) *yaml.Node {
	answers := seqNode()
	var seen []map[string]any
	for _, rc := range recorded {
		args := map[string]any{}
		for k, v := range rc.args {
			if slices.Contains(known, k) {
				args[k] = v
			}
		}
		if slices.ContainsFunc(seen, func(s map[string]any) bool { return jsonEqual(s, args) }) {
			continue
		}
		seen = append(seen, args)
		a := newMap()
		when := newMap()
		exact, _ := jsonNode(mustJSON(args))
		when.set("exact", flow(exact))
		a.set("when", flow(when.n))
		// What the script takes: no empty value, none twice, 100 at
		// most (the spec's limit; a server that sent more is told
		// hasMore).
		var values []string
		for _, v := range rc.values {
			if v != "" && !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		hasMore := rc.hasMore
		if len(values) > maxCompletions {
			values, hasMore = values[:maxCompletions], true
		}
		vs := seqNode()
		for _, v := range values {
			vs.Content = append(vs.Content, strNode(v))
		}
		a.set("values", flow(vs))
		if rc.total != nil && *rc.total >= len(values) {
			a.set("total", intNode(*rc.total))
		}
		if hasMore {
			a.set("hasMore", boolNode(true))
		}
		answers.Content = append(answers.Content, a.n)
	}
	complete := newMap()
	complete.set("answers", answers)
	return complete.n
}

// addCompletions puts the recorded completions of the arguments of the
// prompt or template (ref, name) in its node's list of arguments (a
// prompt's arguments), or in a complete mapping by variable (a
// template's), and notes those of arguments it does not have.
func (r *recording) addCompletions(ref, name string, item mapNode, known []string) (notes []string) {
	var byVar mapNode
	for _, key := range r.completionOrder {
		if key.ref != ref || key.name != name {
			continue
		}
		if !slices.Contains(known, key.arg) {
			notes = append(notes, fmt.Sprintf("Completions of %q were recorded, which it does not list: left out.", key.arg))
			continue
		}
		node := completeNode(r.completions[key], known)
		if ref == "ref/resource" {
			if byVar.n == nil {
				byVar = newMap()
			}
			byVar.set(key.arg, node)
			continue
		}
		for _, arg := range member(item.n, "arguments").Content {
			if n := member(arg, "name"); n != nil && n.Value == key.arg {
				arg.Style = 0 // a block: the completion is long
				mapNode{arg}.set("complete", node)
			}
		}
	}
	if byVar.n != nil {
		item.set("complete", byVar.n)
	}
	return notes
}

// promptArgNames lists the argument names of the listed prompt def.
func promptArgNames(def json.RawMessage) []string {
	var p struct {
		Arguments []struct {
			Name string `json:"name"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(def, &p)
	var names []string
	for _, a := range p.Arguments {
		names = append(names, a.Name)
	}
	return names
}

// resourceTemplates writes the templates the server listed first (those
// an event adds are in the event), with the completions of their
// variables.
func (r *recording) resourceTemplates() *yaml.Node {
	out := seqNode()
	for _, uri := range r.templateOrder {
		if r.events != nil && !r.events.initially(templatesKind, uri) {
			continue // an event adds it
		}
		def := r.templateDefs[uri]
		if r.events != nil {
			def, _ = r.events.initialDef(templatesKind, uri, def, true)
		}
		t, err := r.templateNode(uri, def)
		if err != nil {
			r.omit("resource template", uri, err)
			continue
		}
		out.Content = append(out.Content, t)
	}
	return out
}

// templateNode writes one template, as listed in def, with the recorded
// completions of its variables: in the first lists or in the event that
// adds it, a template completes as the server completed it.
func (r *recording) templateNode(uri string, def json.RawMessage) (*yaml.Node, error) {
	t := pick(def, resourceTemplateMembers)
	vars, _ := templateVars(uri)
	notes := r.addCompletions("ref/resource", uri, t, vars)
	t.n.HeadComment = strings.Join(notes, "\n")
	if err := loadsAs("resourceTemplates", t.n); err != nil {
		return nil, err
	}
	return t.n, nil
}

// completionNotes says what completions were recorded of prompts and
// templates the script does not have.
func (r *recording) completionNotes(prompts []string) []string {
	var notes []string
	for _, key := range r.completionOrder {
		switch {
		case key.ref == "ref/prompt" && !slices.Contains(prompts, key.name):
			notes = append(notes, fmt.Sprintf("Completions of prompt %q, argument %q, were recorded, but not the prompt: left out.", key.name, key.arg))
		case key.ref == "ref/resource" && !slices.Contains(r.templateOrder, key.name):
			notes = append(notes, fmt.Sprintf("Completions of resource %q, variable %q, were recorded, but no template with that uriTemplate was listed: left out.", key.name, key.arg))
		}
	}
	return notes
}
