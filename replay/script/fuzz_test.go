package script

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// FuzzParse: no script, however broken, panics the loader; one that loads
// answers a few requests without panicking.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(peertest.ModuleRoot(), "cassettes", "script-*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Add([]byte("tools: [{name: x, answers: [{text: '{{.args.q}}'}]}]"))
	f.Add([]byte("tools: [{name: x, sequence: [{fault: http-401, headers: {WWW-Authenticate: [Basic, 'Bearer realm=\"a\"'], Retry-After: 1}}, {fault: expire-session, headers: {X-A: b}}]}]"))
	f.Add([]byte("tools: [{name: x, sample: {messages: [{role: user, text: '{{.args.q}}'}], maxTokens: 5}, roots: true, answers: [{when: {sampled: {model: m}}, text: '{{.sampled.content.text}} {{range .roots}}{{.uri}}{{end}}'}]}]"))
	f.Add([]byte("prompts: [{name: p, elicit: {message: '{{.args.q}}', requestedSchema: {type: object}}, answers: [{when: {elicited: {action: accept}}, messages: [{role: user, text: '{{.elicited.content.q}}'}]}, {error: {code: 1, message: '{{.prompt}}'}}]}]"))
	f.Add([]byte("resources: [{uri: 'file:///r', name: r, roots: true, sample: {messages: [{role: user, text: '{{.uri}}'}], maxTokens: 1}, answers: [{when: {sampled: {model: m}}, text: '{{range .roots}}{{.uri}}{{end}}'}, {blob: aGk=}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatal("error with a script")
			}
			return
		}
		ss := s.Open()
		peer := &fakePeer{}
		for i, m := range []string{"initialize", "tools/list", "server/discover", "resources/list", "prompts/list"} {
			ss.Answer(context.Background(), peer, &replay.Request{ID: json.RawMessage{byte('1' + i)}, Method: m, Params: json.RawMessage(`{}`)})
		}
		// Each tool, prompt and resource, in both eras: the handshake
		// era's call, and 2026-07-28's first round of questions and
		// retries.
		var reqs []*replay.Request
		for _, t := range s.tools {
			reqs = append(reqs, askRequests("tools/call", map[string]any{"name": t.name, "arguments": map[string]any{"q": "x"}})...)
		}
		for _, p := range s.prompts {
			reqs = append(reqs, askRequests("prompts/get", map[string]any{"name": p.name, "arguments": map[string]any{"q": "x"}})...)
		}
		for _, r := range s.resources {
			reqs = append(reqs, askRequests("resources/read", map[string]any{"uri": r.uri})...)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // never wait on delays or hung answers
		for _, req := range reqs {
			ss.Answer(ctx, peer, req)
		}
	})
}

// askRequests are a request of method with params in the handshake era,
// and in 2026-07-28 without input responses, with good ones and with bad
// ones.
func askRequests(method string, params map[string]any) []*replay.Request {
	raw, _ := json.Marshal(params)
	out := []*replay.Request{{ID: json.RawMessage("9"), Method: method, Params: raw}}
	for _, input := range []any{nil, map[string]any{
		elicitKind.key: map[string]any{"action": "accept", "content": map[string]any{"q": 1}},
		sampleKind.key: map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "t"}},
		rootsKind.key:  map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}},
	}, map[string]any{sampleKind.key: "not an object", rootsKind.key: map[string]any{"roots": "nor a list"}}} {
		p := maps.Clone(params)
		p["_meta"] = map[string]any{metaVersion: statelessVersion}
		if input != nil {
			p["inputResponses"] = input
		}
		raw, _ := json.Marshal(p)
		out = append(out, &replay.Request{ID: json.RawMessage("10"), Method: method, Params: raw})
	}
	return out
}
