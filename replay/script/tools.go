package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// This file answers tools/call: argument validation, choosing an answer,
// templates, logging, progress, delays and faults.

func (ss *session) callTool(ctx context.Context, peer replay.Peer, c *call) (replay.Reply, bool) {
	s := ss.s
	name, ok := c.str("name")
	if !ok || name == "" {
		if !s.owner {
			return replay.Reply{}, false
		}
		return unnamed(c, "tool", "name", "a tool name"), true
	}
	t := find(ss, &ss.tools.items, func(t *tool) bool { return t.name == name })
	if t == nil {
		if !s.owner {
			return replay.Reply{}, false
		}
		return notInScript(ss, errReply(codeInvalidParams, fmt.Sprintf("tools/call: unknown tool %q", name), nil), "tool", name, &ss.tools.items, func(t *tool) string { return t.name }), true
	}

	var args map[string]any
	if raw, ok := c.params["arguments"]; ok && string(raw) != "null" {
		if err := decodeObject(raw, &args); err != nil {
			ss.count(name) // a call all the same, for sequence and events
			return errReply(codeInvalidParams, fmt.Sprintf("tools/call %s: arguments must be an object", name), nil), true
		}
	}
	if args == nil {
		args = map[string]any{}
	}
	if t.in != nil {
		if err := t.in.Validate(plainNumbers(args)); err != nil {
			ss.count(name)
			msg := fmt.Sprintf("invalid arguments for tool %q: %v", name, err)
			if t.invalidAsError {
				return errReply(codeInvalidParams, msg, nil), true
			}
			return resultReply(map[string]any{"content": []any{map[string]any{"type": "text", "text": msg}}, "isError": true}), true
		}
	}
	data := map[string]any{"args": args, "tool": name, "request": c.number}
	asTask, refuse := ss.taskCall(c, t)
	if refuse != nil {
		ss.count(name)
		return *refuse, true
	}
	answer := ss.askFirst
	if asTask {
		answer = ss.callAsTask
	}
	return answer(ctx, peer, c, questions{
		what: fmt.Sprintf("tool %q", name),
		asks: t.asks,
		data: data,
		start: func() func(context.Context, replay.Peer, *call, map[string]any) (replay.Reply, bool) {
			n := ss.count(name)
			return func(ctx context.Context, peer replay.Peer, c *call, replies map[string]any) (replay.Reply, bool) {
				return ss.chooseAnswer(ctx, peer, c, t, data, n, replies)
			}
		},
		none: func(replies map[string]any) replay.Reply { return noAnswer(t, data, replies) },
	})
}

// count counts a call of the tool name, for sequence and events, and
// returns its number.
func (ss *session) count(name string) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.calls[name]++
	return ss.calls[name]
}

// chooseAnswer picks the answer for call number n, given the client's
// replies to the tool's questions by data name (a question not asked, or
// not answered, has none), and performs it.
func (ss *session) chooseAnswer(ctx context.Context, peer replay.Peer, c *call, t *tool, data map[string]any, n int, replies map[string]any) (replay.Reply, bool) {
	args := data["args"].(map[string]any)
	var a *answer
	if t.sequence {
		a = t.answers[min(n, len(t.answers))-1]
	} else {
		for _, cand := range t.answers {
			if cand.matches(args, replies) {
				a = cand
				break
			}
		}
	}
	if a == nil {
		if !ss.s.owner {
			return replay.Reply{}, false
		}
		return noAnswer(t, data, replies), true
	}
	data = withReplies(data, t.asks, replies)
	data["call"] = n
	// A url-mode elicitation the user accepted is finished first, if the
	// script says so.
	completed := completion(c, t.completes, data)
	if !a.readsArgs {
		// data is a copy (withReplies). The answer, which may wait, holds
		// no arguments it does not render: they may be most of the call.
		delete(data, "args")
	}
	perform := func(ctx context.Context, peer replay.Peer) replay.Reply {
		sendComplete(peer, completed)
		reply, err := ss.perform(ctx, peer, c, a, data)
		if err != nil {
			return errReply(codeInternal, fmt.Sprintf("mcpmock script: tool %q, answer at line %d: %v", t.name, a.at.Line, err), nil)
		}
		return reply
	}
	if c.prepare && (!a.immediate() || completed != "") {
		c.play = perform
		return replay.Reply{}, true
	}
	return perform(ctx, peer), true
}

// noAnswer is what a whole-server script answers when none of a tool's
// answers matches.
func noAnswer(t *tool, data, replies map[string]any) replay.Reply {
	args, _ := data["args"].(map[string]any)
	msg := fmt.Sprintf("mcpmock script: no answer of tool %q matches the arguments %s", t.name, mustJSON(data["args"])) + repliesText(t.asks, replies) + nearest(t.answers, args, replies)
	r := resultReply(map[string]any{"content": []any{map[string]any{"type": "text", "text": msg}}, "isError": true})
	r.Unmatched = true // the script had no answer: --strict fails
	return r
}

// immediate says whether an answer takes no time and needs no peer: no
// delay, no progress, no logging.
func (a *answer) immediate() bool {
	return a.delay == 0 && len(a.progress) == 0 && len(a.log) == 0
}

func render(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", templateError(t.Name(), err)
	}
	return b.String(), nil
}

// templateError says where in a template it failed and, for the usual
// cause, what to write instead, without text/template's repetition of
// the template's name (the caller names the answer and its line).
func templateError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "template: "+name+":")
	msg = strings.Replace(msg, `executing "`+name+`" at `, "", 1)
	if strings.Contains(msg, "nil pointer evaluating") || strings.Contains(msg, "can't evaluate field") {
		msg += " (a field of a value the call left out or that is not an object: guard it with {{with}} … {{end}})"
	}
	return fmt.Errorf("template fails at %s", msg)
}

// wait sleeps for d unless ctx ends first or the client hangs up
// (replay.Sleep).
func wait(ctx context.Context, d time.Duration) bool { return replay.Sleep(ctx, d) }

// perform runs an answer: log notifications, progress steps, the delay,
// then the reply or the fault.
func (ss *session) perform(ctx context.Context, peer replay.Peer, c *call, a *answer, data map[string]any) (replay.Reply, error) {
	ss.mu.Lock()
	minLevel := ss.minLevel
	ss.mu.Unlock()
	if c.stateless {
		// 2026-07-28: the level is the request's own, and a request
		// without one gets no logs at all.
		minLevel = slices.Index(logLevels, c.logLevel)
	}
	for _, l := range a.log {
		if minLevel < 0 || slices.Index(logLevels, l.level) < minLevel {
			continue
		}
		d := l.data
		if l.text != nil {
			s, err := render(l.text, data)
			if err != nil {
				return replay.Reply{}, err
			}
			d = s
		}
		p := map[string]any{"level": l.level, "data": d}
		if l.logger != "" {
			p["logger"] = l.logger
		}
		_ = peer.Notify("notifications/message", mustJSON(p))
	}
	token := c.req.ProgressToken()
	sentProgress := false
	for _, st := range a.progress {
		if !wait(ctx, st.delay) {
			return replay.Reply{NoReply: true}, nil
		}
		if token == nil {
			continue
		}
		p := map[string]any{"progressToken": token, "progress": st.progress}
		if st.total > 0 {
			p["total"] = st.total
		}
		if st.msg != nil {
			m, err := render(st.msg, data)
			if err != nil {
				return replay.Reply{}, err
			}
			p["message"] = m
		}
		_ = peer.Notify("notifications/progress", mustJSON(p))
		sentProgress = true
	}
	if !wait(ctx, a.delay) {
		return replay.Reply{NoReply: true}, nil
	}
	switch a.fault {
	case "hang":
		return replay.Reply{NoReply: true}, nil
	case "close":
		return replay.Reply{NoReply: true, CloseAfter: true}, nil
	case "expire-session":
		return replay.Reply{ExpireSession: true, Refusal: a.refusal}, nil
	}
	if a.status != 0 && a.err == nil {
		return replay.Reply{HTTPStatus: a.status, Refusal: a.refusal}, nil
	}
	if sentProgress && !c.stateless {
		// A TypeScript SDK client would drop the progress it reads
		// together with the answer; a 2026-07-28 call takes no requests
		// from the server.
		replay.ProgressBarrier(ctx, peer)
	}
	var reply replay.Reply
	if a.err != nil {
		msg, err := render(a.err.msg, data)
		if err != nil {
			return replay.Reply{}, err
		}
		reply = errReply(a.err.code, msg, a.err.data)
		reply.HTTPStatus, reply.Refusal = a.status, a.refusal // http-NNN with an error: answered with that status
	} else {
		res, err := a.result(data)
		if err != nil {
			return replay.Reply{}, err
		}
		reply.Result = res
		if c.stateless {
			reply.Result = ss.stateless(c.req.Method, reply.Result)
		}
	}
	if a.fault == "" || a.status != 0 {
		return reply, nil
	}
	frame := responseFrame(c.req.ID, reply)
	switch a.fault {
	case "malformed":
		// Cut the response in half: a frame that starts right and never ends.
		return replay.Reply{Raw: [][]byte{frame[:len(frame)/2]}}, nil
	case "duplicate":
		return replay.Reply{Raw: [][]byte{frame, bytes.Clone(frame)}}, nil
	default: // wrong-id
		return replay.Reply{Raw: [][]byte{responseFrame(wrongID(c.req.ID), reply)}}, nil
	}
}

// result renders a successful (or isError) tools/call result.
func (a *answer) result(data map[string]any) (json.RawMessage, error) {
	content := make([]any, 0, len(a.content))
	for _, b := range a.content {
		m := make(map[string]any, len(b.v))
		for k, v := range b.v {
			m[k] = v
		}
		if b.text != nil {
			s, err := render(b.text, data)
			if err != nil {
				return nil, err
			}
			m["text"] = s
		}
		if b.resource != nil {
			r := map[string]any{}
			for k, v := range m["resource"].(map[string]any) {
				r[k] = v
			}
			s, err := render(b.resource, data)
			if err != nil {
				return nil, err
			}
			r["text"] = s
			m["resource"] = r
		}
		content = append(content, m)
	}
	res := map[string]any{}
	if a.hasStruct {
		res["structuredContent"] = a.structured
		if len(content) == 0 {
			// The spec asks for the structured result as text too, for
			// clients that read only content.
			content = append(content, map[string]any{"type": "text", "text": string(mustJSON(a.structured))})
		}
	}
	res["content"] = content
	if a.isError {
		res["isError"] = true
	}
	if a.meta != nil {
		res["_meta"] = a.meta
	}
	return mustJSON(res), nil
}

// responseFrame writes a JSON-RPC response by hand, for the faults that
// bypass the engine's writer.
func responseFrame(id json.RawMessage, r replay.Reply) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if r.Error != nil {
		b.WriteString(`,"error":`)
		b.Write(mustJSON(r.Error))
	} else {
		b.WriteString(`,"result":`)
		b.Write(r.Result)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// wrongID is an id the client did not send, and that no client can take
// for one it did: the id with "-wrong" after it, as a string. (1 and "1"
// differ in JSON-RPC, but the TypeScript SDK pairs answers by Number(id),
// so "1" would answer its 1; Number("1-wrong") is NaN.)
func wrongID(id json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return mustJSON(s + "-wrong")
	}
	return mustJSON(string(id) + "-wrong")
}
