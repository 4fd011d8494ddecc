package script

import (
	"encoding/json"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file writes FromTape's resources and prompts (tools are in
// generate_build.go): each as listed, with what its first read or fetch
// returned, and, when the server asked the client first, the question
// and the answers its user's replies chose (generate_asks.go).

func (r *recording) resources() *yaml.Node {
	out := seqNode()
	for _, uri := range r.resOrder {
		if r.events != nil && !r.events.initially("resources", uri) {
			continue // an event adds it
		}
		def, listed := r.resDefs[uri]
		if r.events != nil {
			def, listed = r.events.initialDef("resources", uri, def, listed)
		}
		res, err := r.resourceNode(uri, def, listed)
		if err != nil {
			r.omit("resource", uri, err)
			continue
		}
		out.Content = append(out.Content, res)
	}
	return out
}

// resourceNode writes one resource, as listed in def, with the contents
// it was first read with.
func (r *recording) resourceNode(uri string, def json.RawMessage, listed bool) (*yaml.Node, error) {
	if !listed {
		def = mustJSON(map[string]any{"uri": uri, "name": uri})
	}
	res := pick(def, resourceMembers)
	if member(res.n, "name") == nil {
		res.set("name", strNode(uri))
	}
	reads := r.askers["resources/read\x00"+uri]
	asks, notes := r.askFields(reads)
	res.n.Content = append(res.n.Content, asks...)
	contents, read := r.reads[uri]
	body := pick(contents, []string{"text", "blob"})
	if !read {
		notes = append(notes, "Never read while recording: its text is empty.")
	}
	if len(body.n.Content) == 0 {
		body.set("text", strNode(""))
	}
	body.n.Content = body.n.Content[:2]
	var answers *yaml.Node
	if elicits(asks) {
		answers = answersByAction(reads, func(x *exchange, a mapNode) {
			if len(x.err) > 0 {
				a.set("error", errorNode(x.err))
				return
			}
			var result struct {
				Contents []json.RawMessage `json:"contents"`
			}
			_ = json.Unmarshal(x.result, &result)
			if len(result.Contents) > 0 {
				body := pick(result.Contents[0], []string{"text", "blob"})
				literalTemplateNode(member(body.n, "text")) // an answer's text is a template
				a.n.Content = append(a.n.Content, body.n.Content...)
			}
			if len(a.n.Content) == 2 {
				a.set("text", strNode(""))
			}
		})
	}
	if answers == nil {
		res.n.Content = append(res.n.Content, body.n.Content...)
	} else {
		// Answers or text, not both: what was first read answers any
		// other reply, and its text is now a template.
		literalTemplateNode(member(body.n, "text"))
		answers.Content = append(answers.Content, body.n)
		res.set("answers", answers)
	}
	res.n.HeadComment = strings.Join(notes, "\n")
	return res.n, loadsAs("resources", res.n)
}

func (r *recording) prompts() *yaml.Node {
	out := seqNode()
	for _, name := range r.promptOrder {
		if r.events != nil && !r.events.initially("prompts", name) {
			continue // an event adds it
		}
		def, listed := r.promptDefs[name]
		if r.events != nil {
			def, listed = r.events.initialDef("prompts", name, def, listed)
		}
		p, err := r.promptNode(name, def, listed)
		if err != nil {
			r.omit("prompt", name, err)
			continue
		}
		out.Content = append(out.Content, p)
	}
	return out
}

// promptNode writes one prompt, as listed in def, with the messages of
// its first prompts/get.
func (r *recording) promptNode(name string, def json.RawMessage, listed bool) (*yaml.Node, error) {
	if !listed {
		def = mustJSON(map[string]any{"name": name})
	}
	p := pick(def, promptMembers)
	gets := r.askers["prompts/get\x00"+name]
	asks, notes := r.askFields(gets)
	notes = append(notes, r.addCompletions("ref/prompt", name, p, promptArgNames(def))...)
	p.n.Content = append(p.n.Content, asks...)
	msgs := seqNode()
	if x := r.gets[name]; x != nil {
		msgs = promptMessages(x.result)
		var args struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(x.params, &args) == nil && len(args.Arguments) > 0 && string(args.Arguments) != "{}" {
			notes = append(notes, "Its messages as recorded for the arguments "+string(args.Arguments)+"; use {{.args.NAME}} to follow them.")
		}
	}
	if len(msgs.Content) == 0 {
		m := newMap()
		m.set("role", strNode("user"))
		m.set("text", strNode("(not recorded)"))
		msgs.Content = append(msgs.Content, flow(m.n))
		if len(gets) == 0 {
			notes = append(notes, "Never fetched while recording: write its messages.")
		} else {
			notes = append(notes, "No fetch while recording got messages: write them.")
		}
	}
	var answers *yaml.Node
	if elicits(asks) {
		answers = answersByAction(gets, func(x *exchange, a mapNode) {
			if len(x.err) > 0 {
				a.set("error", errorNode(x.err))
			} else {
				a.set("messages", promptMessages(x.result))
			}
		})
	}
	if answers == nil {
		p.set("messages", msgs)
	} else {
		// Answers or messages, not both: the first messages recorded
		// answer any other reply.
		other := newMap()
		other.set("messages", msgs)
		answers.Content = append(answers.Content, other.n)
		p.set("answers", answers)
	}
	p.n.HeadComment = strings.Join(notes, "\n")
	return p.n, loadsAs("prompts", p.n)
}

// promptMessages writes the messages of a prompts/get result.
func promptMessages(result json.RawMessage) *yaml.Node {
	var res struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(result, &res)
	msgs := seqNode()
	for _, raw := range res.Messages {
		msgs.Content = append(msgs.Content, promptMessage(raw))
	}
	return msgs
}

// promptMessage writes one recorded prompt message: its text, a template
// here, or its content block as written.
func promptMessage(raw json.RawMessage) *yaml.Node {
	m := pick(raw, []string{"role"})
	n, _ := jsonNode(raw)
	content := member(n, "content")
	if text, ok := textBlock(content); ok {
		m.set("text", strNode(literalTemplate(text)))
		return m.n
	}
	m.set("content", content)
	return m.n
}
