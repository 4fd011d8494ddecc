package script

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/replay"
)

// This file answers resources/read: what the resource asks the client
// first (asks.go), and its contents, fixed or chosen by when.

func (ss *session) readResource(ctx context.Context, peer replay.Peer, c *call) (replay.Reply, bool) {
	uri, ok := c.str("uri")
	if !ok || uri == "" {
		if !ss.s.owner {
			return replay.Reply{}, false
		}
		return unnamed(c, "resource", "uri", "a resource URI"), true
	}
	r := find(ss, &ss.resources.items, func(r *resource) bool { return r.uri == uri })
	switch {
	case r == nil && ss.s.owner:
		// 2026-07-28 retired -32002 for -32602, with the URI as data.
		code := codeResourceNotFound
		if c.stateless {
			code = codeInvalidParams
		}
		return notInScript(ss, errReply(code, fmt.Sprintf("resource not found: %q", uri), map[string]any{"uri": uri}), "resource", uri, &ss.resources.items, func(r *resource) string { return r.uri }), true
	case r == nil:
		return replay.Reply{}, false
	}
	data := map[string]any{"uri": uri, "request": c.number}
	answer := func(_ context.Context, peer replay.Peer, c *call, replies map[string]any) (replay.Reply, bool) {
		return ss.answerResource(peer, c, r, data, replies)
	}
	return ss.askFirst(ctx, peer, c, questions{
		what:  fmt.Sprintf("resource %q", uri),
		asks:  r.asks,
		data:  data,
		start: func() func(context.Context, replay.Peer, *call, map[string]any) (replay.Reply, bool) { return answer },
		none:  func(replies map[string]any) replay.Reply { return noResourceAnswer(r, replies) },
	})
}

// answerResource returns the resource's contents, or those of its first
// answer that matches the client's replies.
func (ss *session) answerResource(peer replay.Peer, c *call, r *resource, data, replies map[string]any) (replay.Reply, bool) {
	if len(r.answers) == 0 {
		data = withReplies(data, r.asks, replies)
		return c.completeThen(peer, completion(c, r.completes, data), func() replay.Reply {
			return replay.Reply{Result: r.contents}
		}), true
	}
	i := slices.IndexFunc(r.answers, func(a *resourceAnswer) bool { return a.matches(nil, replies) })
	if i < 0 {
		if !ss.s.owner {
			return replay.Reply{}, false
		}
		return noResourceAnswer(r, replies), true
	}
	a := r.answers[i]
	data = withReplies(data, r.asks, replies)
	return c.completeThen(peer, completion(c, r.completes, data), func() replay.Reply {
		fail := func(err error) replay.Reply {
			return errReply(codeInternal, fmt.Sprintf("mcpmock script: resource %q, answer at line %d: %v", r.uri, a.at.Line, err), nil)
		}
		if a.err != nil {
			msg, err := render(a.err.msg, data)
			if err != nil {
				return fail(err)
			}
			return errReply(a.err.code, msg, a.err.data)
		}
		content := map[string]any{"uri": r.uri}
		if r.mimeType != "" {
			content["mimeType"] = r.mimeType
		}
		if a.text != nil {
			text, err := render(a.text, data)
			if err != nil {
				return fail(err)
			}
			content["text"] = text
		} else {
			content["blob"] = a.blob
		}
		return resultReply(map[string]any{"contents": []any{content}})
	}), true
}

// noResourceAnswer is what a whole-server script answers when none of a
// resource's answers matches the client's replies.
func noResourceAnswer(r *resource, replies map[string]any) replay.Reply {
	reply := errReply(codeInternal, fmt.Sprintf("mcpmock script: no answer of resource %q matches", r.uri)+strings.TrimPrefix(repliesText(r.asks, replies), " and"), nil)
	reply.Unmatched = true // the script had no answer: --strict fails
	return reply
}
