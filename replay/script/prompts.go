package script

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcptape/mcptape/replay"
)

// This file answers prompts/get: argument checks, what the prompt asks the
// client first (asks.go), and its messages, fixed or chosen by when.

func (ss *session) getPrompt(ctx context.Context, peer replay.Peer, c *call) (replay.Reply, bool) {
	name, ok := c.str("name")
	if !ok || name == "" {
		if !ss.s.owner {
			return replay.Reply{}, false
		}
		return unnamed(c, "prompt", "name", "a prompt name"), true
	}
	p := find(ss, &ss.prompts.items, func(p *prompt) bool { return p.name == name })
	if p == nil {
		if ss.s.owner {
			return notInScript(ss, errReply(codeInvalidParams, fmt.Sprintf("prompts/get: unknown prompt %q", name), nil), "prompt", name, &ss.prompts.items, func(p *prompt) string { return p.name }), true
		}
		return replay.Reply{}, false
	}
	args := map[string]any{}
	if raw, ok := c.params["arguments"]; ok && string(raw) != "null" {
		if err := decodeObject(raw, &args); err != nil {
			return errReply(codeInvalidParams, "prompts/get: arguments must be an object", nil), true
		}
	}
	for _, r := range p.required {
		if _, ok := args[r]; !ok {
			return errReply(codeInvalidParams, fmt.Sprintf("prompts/get %s: missing required argument %q", name, r), nil), true
		}
	}
	data := map[string]any{"args": args, "prompt": name, "request": c.number}
	answer := func(_ context.Context, peer replay.Peer, c *call, replies map[string]any) (replay.Reply, bool) {
		return ss.answerPrompt(peer, c, p, data, replies)
	}
	return ss.askFirst(ctx, peer, c, questions{
		what:  fmt.Sprintf("prompt %q", name),
		asks:  p.asks,
		data:  data,
		start: func() func(context.Context, replay.Peer, *call, map[string]any) (replay.Reply, bool) { return answer },
		none:  func(replies map[string]any) replay.Reply { return noPromptAnswer(p, data, replies) },
	})
}

// answerPrompt returns the prompt's messages, or those of its first answer
// that matches the arguments and the client's replies.
func (ss *session) answerPrompt(peer replay.Peer, c *call, p *prompt, data, replies map[string]any) (replay.Reply, bool) {
	msgs := p.messages
	var a *promptAnswer
	if len(p.answers) > 0 {
		args := data["args"].(map[string]any)
		i := slices.IndexFunc(p.answers, func(a *promptAnswer) bool { return a.matches(args, replies) })
		if i < 0 {
			if !ss.s.owner {
				return replay.Reply{}, false
			}
			return noPromptAnswer(p, data, replies), true
		}
		a = p.answers[i]
		msgs = a.messages
	}
	data = withReplies(data, p.asks, replies)
	return c.completeThen(peer, completion(c, p.completes, data), func() replay.Reply {
		if a != nil && a.err != nil {
			msg, err := render(a.err.msg, data)
			if err != nil {
				return errReply(codeInternal, fmt.Sprintf("mcpmock script: prompt %q, answer at line %d: %v", p.name, a.at.Line, err), nil)
			}
			return errReply(a.err.code, msg, a.err.data)
		}
		rendered, err := renderMessages(msgs, data)
		if err != nil {
			return errReply(codeInternal, fmt.Sprintf("mcpmock script: prompt %q: %v", p.name, err), nil)
		}
		res := map[string]any{"messages": rendered}
		var def map[string]any
		if json.Unmarshal(p.def, &def) == nil && def["description"] != nil {
			res["description"] = def["description"]
		}
		return resultReply(res)
	}), true
}

// noPromptAnswer is what a whole-server script answers when none of a
// prompt's answers matches: prompts/get has no isError, so an error.
func noPromptAnswer(p *prompt, data, replies map[string]any) replay.Reply {
	args, _ := data["args"].(map[string]any)
	r := errReply(codeInternal, fmt.Sprintf("mcpmock script: no answer of prompt %q matches the arguments %s", p.name, mustJSON(data["args"]))+repliesText(p.asks, replies)+nearest(p.answers, args, replies), nil)
	r.Unmatched = true // the script had no answer: --strict fails
	return r
}

// renderMessages renders the messages of a prompt or of a sample.
func renderMessages(msgs []promptMsg, data map[string]any) ([]any, error) {
	out := []any{}
	for _, m := range msgs {
		content := m.content
		if m.text != nil {
			text, err := render(m.text, data)
			if err != nil {
				return nil, err
			}
			content = map[string]any{"type": "text", "text": text}
		}
		out = append(out, map[string]any{"role": m.role, "content": content})
	}
	return out, nil
}
