package script

import (
	"context"
	"encoding/json"
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
	f.Add([]byte("tools: [{name: x, sample: {messages: [{role: user, text: '{{.args.q}}'}], maxTokens: 5}, roots: true, answers: [{when: {sampled: {model: m}}, text: '{{.sampled.content.text}} {{range .roots}}{{.uri}}{{end}}'}]}]"))
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
		for _, t := range s.tools {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // never wait on delays or hung answers
			params, _ := json.Marshal(map[string]any{"name": t.name, "arguments": map[string]any{"q": "x"}})
			ss.Answer(ctx, peer, &replay.Request{ID: json.RawMessage("9"), Method: "tools/call", Params: params})
			// 2026-07-28: the first round of a tool's questions, and retries.
			meta := map[string]any{metaVersion: statelessVersion}
			for _, input := range []any{nil, map[string]any{
				elicitKind.key: map[string]any{"action": "accept", "content": map[string]any{"q": 1}},
				sampleKind.key: map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "t"}},
				rootsKind.key:  map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}},
			}, map[string]any{sampleKind.key: "not an object", rootsKind.key: map[string]any{"roots": "nor a list"}}} {
				p := map[string]any{"name": t.name, "arguments": map[string]any{"q": "x"}, "_meta": meta}
				if input != nil {
					p["inputResponses"] = input
				}
				params, _ := json.Marshal(p)
				ss.Answer(ctx, peer, &replay.Request{ID: json.RawMessage("10"), Method: "tools/call", Params: params})
			}
		}
	})
}
