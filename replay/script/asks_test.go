package script

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
)

// asksScript has a tool that asks all three questions.
const asksScript = `
tools:
  - name: all
    inputSchema: {type: object, properties: {topic: {type: string}}}
    elicit: {message: "About {{.args.topic}}?", requestedSchema: {type: object, properties: {ok: {type: boolean}}}}
    sample:
      messages: [{role: user, text: "Write about {{.args.topic}}"}]
      systemPrompt: "Be brief about {{.args.topic}}."
      maxTokens: 50
      temperature: 0.5
      stopSequences: ["END"]
      includeContext: thisServer
    roots: true
    answers:
      - when: {elicited: {action: accept}, sampled: {content: {text: yes}}}
        text: "both: {{.sampled.model}} {{len .roots}}"
      - when: {sampled: {content: {text: yes}}}
        text: "model only: {{.elicited.action}}|{{len .roots}}"
      - text: "neither: {{.elicited.action}}|{{.sampled.model}}|{{len .roots}}"
`

// TestSession_Asks_Stateless: a 2026-07-28 call is answered with every
// question at once under its own key, and the retry's replies choose the
// answer; a reply missing or not an object is none, and a question the
// client's capabilities rule out is not put.
func TestSession_Asks_Stateless(t *testing.T) {
	s, err := Parse("asks.yaml", []byte(asksScript))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{metaVersion: statelessVersion}
	call := func(extra map[string]any) map[string]any {
		p := map[string]any{"name": "all", "arguments": map[string]any{"topic": "tides"}, "_meta": meta}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	c := newClient(t, s)
	first := c.result("tools/call", call(nil))
	if first["resultType"] != "input_required" {
		t.Fatalf("first round: %v", first)
	}
	reqs, _ := first["inputRequests"].(map[string]any)
	want := map[string]string{"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}
	if len(reqs) != len(want) {
		t.Fatalf("inputRequests %v, want the keys of %v", reqs, want)
	}
	for key, method := range want {
		r, _ := reqs[key].(map[string]any)
		if r["method"] != method {
			t.Errorf("inputRequests[%s] = %v, want method %s", key, r, method)
		}
	}
	sp, _ := reqs["sampling"].(map[string]any)["params"].(map[string]any)
	gotParams, _ := json.Marshal(sp)
	if wantParams := `{"includeContext":"thisServer","maxTokens":50,"messages":[{"content":{"text":"Write about tides","type":"text"},"role":"user"}],"stopSequences":["END"],"systemPrompt":"Be brief about tides.","temperature":0.5}`; string(gotParams) != wantParams {
		t.Errorf("sampling params\n got %s\nwant %s", gotParams, wantParams)
	}

	sampled := map[string]any{"role": "assistant", "model": "m1", "content": map[string]any{"type": "text", "text": "yes"}}
	roots := map[string]any{"roots": []any{map[string]any{"uri": "file:///a"}, map[string]any{"uri": "file:///b"}}}
	for _, tc := range []struct {
		name      string
		responses map[string]any
		want      string
	}{
		{"all three", map[string]any{"elicitation": map[string]any{"action": "accept"}, "sampling": sampled, "roots": roots}, "both: m1 2"},
		{"no elicitation reply", map[string]any{"sampling": sampled, "roots": roots}, "model only: <no value>|2"},
		{"a reply not an object", map[string]any{"elicitation": "accept", "sampling": sampled}, "model only: <no value>|0"},
		{"a declined form, no model", map[string]any{"elicitation": map[string]any{"action": "decline"}}, "neither: decline|<no value>|0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.result("tools/call", call(map[string]any{"inputResponses": tc.responses}))
			if text := firstText(t, got); text != tc.want {
				t.Errorf("%q, want %q", text, tc.want)
			}
		})
	}

	t.Run("no sampling capability", func(t *testing.T) {
		noSampling := map[string]any{metaVersion: statelessVersion, metaClientCapabilities: map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{}}}
		got := c.result("tools/call", map[string]any{"name": "all", "arguments": map[string]any{"topic": "x"}, "_meta": noSampling})
		reqs, _ := got["inputRequests"].(map[string]any)
		if _, ok := reqs["sampling"]; ok || len(reqs) != 2 {
			t.Errorf("inputRequests %v: want elicitation and roots only", reqs)
		}
	})
}

// TestSession_Asks_Handshake: a handshake-era client is asked mid-call,
// one question after another in the order elicit, sample, roots; one it
// answers with an error has no reply.
func TestSession_Asks_Handshake(t *testing.T) {
	s, err := Parse("asks.yaml", []byte(asksScript))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	c.peer.answers = func(method string, _ json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "sampling/createMessage":
			return json.RawMessage(`{"role":"assistant","model":"m2","content":{"type":"text","text":"yes"}}`), nil
		case "roots/list":
			return json.RawMessage(`{"roots":[{"uri":"file:///only"}]}`), nil
		}
		return nil, &replay.RPCError{Code: -32601, Message: "not here"}
	}
	got := c.result("tools/call", toolCall("all", map[string]any{"topic": "tides"}))
	if text := firstText(t, got); text != "model only: <no value>|1" {
		t.Errorf("%q", text)
	}
	var methods []string
	for _, line := range c.peer.take() {
		if m, ok := strings.CutPrefix(line, "call "); ok {
			methods = append(methods, strings.Fields(m)[0])
		}
	}
	if want := []string{"elicitation/create", "sampling/createMessage", "roots/list"}; !slices.Equal(methods, want) {
		t.Errorf("asked %v, want %v", methods, want)
	}
}
