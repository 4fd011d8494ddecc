package script

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/suggest"
	"github.com/mcptape/mcptape/replay"
)

// This file is completion/complete (2025-03-26 on): argument
// autocompletion for prompts and resource templates. A completion is a
// fixed list filtered by the prefix the client typed, as a real server's
// usually is, or an explicit answer chosen by when.

// maxCompletions is the most values one completion may hold (the spec's
// "must not exceed 100").
const maxCompletions = 100

// completer is a compiled Complete.
type completer struct {
	values  []string
	answers []*completeAnswer
}

type completeAnswer struct {
	at Pos
	matcher
	values  []string
	total   int
	hasMore bool
	err     *rpcErr
}

// resourceTemplate is a compiled ResourceTemplate.
type resourceTemplate struct {
	uriTemplate string
	def         json.RawMessage
	vars        []string // its variables, in the order written
	complete    map[string]*completer
}

// complete compiles the completion of argument arg of owner (`prompt
// "p"` or `resource template "t"`, for errors), whose arguments are
// known.
func (c *compiler) complete(cm *Complete, owner, arg string, known []string) *completer {
	if len(cm.Values) == 0 && len(cm.Answers) == 0 {
		c.errorf(cm.Pos, "complete needs values or answers (a completion of %s argument %q)", owner, arg)
	}
	cc := &completer{values: c.completionValues(cm.Values, sub(cm.Pos, "values"), -1)}
	for i := range cm.Answers {
		a := &cm.Answers[i]
		ca := &completeAnswer{at: a.Pos, hasMore: a.HasMore}
		if w := a.When; w != nil {
			if w.Elicited.Set || w.Sampled.Set {
				c.errorf(w.Pos, "a completion asks the client nothing: when takes exact, subset or regex over the arguments")
			}
			ca.matcher = c.when(&When{Pos: w.Pos, Exact: w.Exact, Subset: w.Subset, Regex: w.Regex}, "completion", nil)
			c.completionWhenNames(w, owner, known)
		}
		switch {
		case a.Error != nil && (len(a.Values) > 0 || a.Total != nil || a.HasMore):
			c.errorf(sub(a.Pos, "error"), "a JSON-RPC error cannot also carry values, total or hasMore")
		case a.Error != nil:
			ca.err = c.rpcErr(a.Error)
		}
		ca.values = c.completionValues(a.Values, sub(a.Pos, "values"), maxCompletions)
		ca.total = len(ca.values)
		if a.HasMore && a.Total == nil {
			ca.total = unknownTotal // more, but not how many: a total would say none
		}
		if a.Total != nil {
			ca.total = *a.Total
			if *a.Total < len(a.Values) {
				c.errorf(sub(a.Pos, "total"), "total %d is less than the %d values given: total counts every value there is", *a.Total, len(a.Values))
			}
		}
		cc.answers = append(cc.answers, ca)
	}
	c.unreachable(len(cm.Answers), func(i int) (Pos, bool) { return cm.Answers[i].Pos, cm.Answers[i].When != nil })
	return cc
}

// completionValues checks a list of values: no empty one, none twice
// (a client shows each), at most max when max >= 0.
func (c *compiler) completionValues(values []string, p Pos, max int) []string {
	seen := map[string]int{}
	for i, v := range values {
		vp := Pos{Line: p.Line, Col: p.Col, Path: fmt.Sprintf("%s[%d]", p.Path, i)}
		if v == "" {
			c.errorf(vp, "an empty value completes nothing")
		}
		if j, dup := seen[v]; dup && v != "" {
			c.errorf(vp, "value %q is given twice (first as [%d])", v, j)
		}
		seen[v] = i
	}
	if max >= 0 && len(values) > max {
		c.errorf(p, "%d values: a completion holds at most %d (the spec's limit); give total or hasMore for the rest", len(values), max)
	}
	return values
}

// completionWhenNames refuses a when over an argument the prompt (or
// template) does not have: it could never match.
func (c *compiler) completionWhenNames(w *When, owner string, known []string) {
	check := func(field string, names []string) {
		for _, n := range names {
			if !slices.Contains(known, n) {
				c.errorf(sub(sub(w.Pos, field), n), "%s has no argument %q (it has: %s)%s", owner, n, strings.Join(known, ", "), suggest.DidYouMean(n, known, "%q"))
			}
		}
	}
	for field, v := range map[string]Value{"exact": w.Exact, "subset": w.Subset} {
		if m, ok := v.V.(map[string]any); ok {
			check(field, sortedKeys(m))
		}
	}
	check("regex", sortedKeys(w.Regex))
}

// resourceTemplate compiles one resource template.
func (c *compiler) resourceTemplate(rt *ResourceTemplate) *resourceTemplate {
	if rt.URITemplate == "" {
		c.errorf(rt.Pos, "a resource template needs a uriTemplate")
	}
	if rt.Name == "" {
		c.errorf(rt.Pos, "a resource template needs a name")
	}
	vars, problem := templateVars(rt.URITemplate)
	if problem != "" {
		c.errorf(sub(rt.Pos, "uriTemplate"), "uriTemplate %q: %s", rt.URITemplate, problem)
	}
	def := map[string]any{"uriTemplate": rt.URITemplate, "name": rt.Name}
	for k, v := range map[string]string{"title": rt.Title, "description": rt.Description, "mimeType": rt.MimeType} {
		if v != "" {
			def[k] = v
		}
	}
	for k, v := range map[string]Value{"annotations": rt.Annotations, "icons": rt.Icons, "_meta": rt.Meta} {
		if v.Set {
			def[k] = v.V
		}
	}
	ct := &resourceTemplate{uriTemplate: rt.URITemplate, def: mustJSON(def), vars: vars, complete: map[string]*completer{}}
	owner := fmt.Sprintf("resource template %q", rt.URITemplate)
	for _, name := range sortedKeys(rt.Complete) {
		cm := rt.Complete[name]
		if !slices.Contains(vars, name) && problem == "" {
			c.errorf(sub(sub(rt.Pos, "complete"), name), "%s has no variable %q (it has: %s)%s", owner, name, strings.Join(vars, ", "), suggest.DidYouMean(name, vars, "%q"))
		}
		ct.complete[name] = c.complete(&cm, owner, name, vars)
	}
	return ct
}

// templateVars lists the variables of an RFC 6570 URI template:
// {name}, {+name}, {?a,b}, {name*}, {name:3}.
func templateVars(t string) (vars []string, problem string) {
	rest := t
	for {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			return vars, ""
		}
		if rest[open] == '}' {
			return vars, "a } without its {"
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] == '{' {
			return vars, "a { without its }"
		}
		expr := strings.TrimLeft(rest[open+1:open+1+end], "+#./;?&")
		for v := range strings.SplitSeq(expr, ",") {
			v, _, _ = strings.Cut(strings.TrimSuffix(v, "*"), ":")
			if v == "" {
				return vars, "an expression names no variable"
			}
			if !slices.Contains(vars, v) {
				vars = append(vars, v)
			}
		}
		rest = rest[open+1+end+1:]
	}
}

// completeRequest answers completion/complete. A whole-server script
// that declares no completions leaves it unanswered (-32601, as a server
// without the capability); an override answers only what it completes.
func (ss *session) completeRequest(c *call) (replay.Reply, bool) {
	s := ss.s
	if s.owner && !s.completions {
		return replay.Reply{}, false
	}
	const method = "completion/complete: "
	invalid := func(format string, args ...any) (replay.Reply, bool) {
		if !s.owner {
			return replay.Reply{}, false
		}
		r := errReply(codeInvalidParams, method+fmt.Sprintf(format, args...), nil)
		r.Unmatched = true
		r.Error.Why = r.Error.Message
		return r, true
	}
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if raw, ok := c.params["ref"]; !ok || json.Unmarshal(raw, &ref) != nil {
		return invalid("params.ref must be {type: ref/prompt, name} or {type: ref/resource, uri}")
	}
	var arg struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	}
	if raw, ok := c.params["argument"]; !ok || json.Unmarshal(raw, &arg) != nil || arg.Name == nil || arg.Value == nil {
		return invalid("params.argument must be {name, value}, both strings")
	}
	var ctx struct {
		Arguments map[string]any `json:"arguments"`
	}
	if raw, ok := c.params["context"]; ok && string(raw) != "null" && json.Unmarshal(raw, &ctx) != nil {
		return invalid("params.context must be {arguments: {name: value, …}}")
	}
	var (
		cm    *completer
		known []string
		what  string
	)
	switch ref.Type {
	case "ref/prompt":
		p := find(ss, &ss.prompts.items, func(p *prompt) bool { return p.name == ref.Name })
		if p == nil {
			if !s.owner {
				return replay.Reply{}, false
			}
			return notInScript(ss, errReply(codeInvalidParams, fmt.Sprintf(method+"unknown prompt %q", ref.Name), nil), "prompt", ref.Name, &ss.prompts.items, func(p *prompt) string { return p.name }), true
		}
		cm, known, what = p.complete[*arg.Name], p.args, fmt.Sprintf("prompt %q", p.name)
	case "ref/resource":
		t := find(ss, &ss.templates.items, func(t *resourceTemplate) bool { return t.uriTemplate == ref.URI })
		if t == nil {
			if !s.owner {
				return replay.Reply{}, false
			}
			return notInScript(ss, errReply(codeInvalidParams, fmt.Sprintf(method+"unknown resource template %q", ref.URI), nil), "resource template", ref.URI, &ss.templates.items, func(t *resourceTemplate) string { return t.uriTemplate }), true
		}
		cm, known, what = t.complete[*arg.Name], t.vars, fmt.Sprintf("resource template %q", t.uriTemplate)
	default:
		return invalid("unknown ref type %q: want ref/prompt or ref/resource", ref.Type)
	}
	if !slices.Contains(known, *arg.Name) {
		return invalid("%s has no argument %q (it has: %s)", what, *arg.Name, strings.Join(known, ", "))
	}
	if cm == nil {
		if !s.owner {
			return replay.Reply{}, false
		}
		// A real server without a completer for the argument suggests
		// nothing, rather than failing the client's typing.
		return completionReply(nil, 0, false), true
	}
	args := maps.Clone(ctx.Arguments)
	if args == nil {
		args = map[string]any{}
	}
	args[*arg.Name] = *arg.Value
	for _, a := range cm.answers {
		if !a.matches(args, nil) {
			continue
		}
		if a.err != nil {
			msg, err := render(a.err.msg, map[string]any{"args": args})
			if err != nil {
				return errReply(codeInternal, fmt.Sprintf("mcpmock script: completion of %s, answer at line %d: %v", what, a.at.Line, err), nil), true
			}
			return errReply(a.err.code, msg, a.err.data), true
		}
		return completionReply(a.values, a.total, a.hasMore), true
	}
	var matched []string
	for _, v := range cm.values {
		if strings.HasPrefix(v, *arg.Value) {
			matched = append(matched, v)
		}
	}
	total := len(matched)
	if len(matched) > maxCompletions {
		matched = matched[:maxCompletions]
	}
	return completionReply(matched, total, total > len(matched)), true
}

// unknownTotal is the total of an answer that says it has more but not
// how many: it is left out.
const unknownTotal = -1

// completionReply is a CompleteResult. total is sent whenever the script
// knows it; hasMore only when true, as a server that has nothing more
// leaves it out.
func completionReply(values []string, total int, hasMore bool) replay.Reply {
	if values == nil {
		values = []string{}
	}
	completion := map[string]any{"values": values}
	if total != unknownTotal {
		completion["total"] = total
	}
	if hasMore {
		completion["hasMore"] = true
	}
	return resultReply(map[string]any{"completion": completion})
}
