package script

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// TestFromTape_Completions: recorded completion/complete exchanges become
// the complete of the prompt arguments and resource template variables
// they completed, one answer per set of arguments, and the script answers
// each as the server did; templates are listed as recorded. What the
// script could not hold is said in a comment.
func TestFromTape_Completions(t *testing.T) {
	s, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"translate","arguments":[{"name":"language","required":true},{"name":"dialect"}]}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":[{"uriTemplate":"file:///logs/{service}","name":"logs","mimeType":"text/plain"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"language","value":"G"}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"completion":{"values":["German","Greek"],"total":2}}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"dialect","value":""},"context":{"arguments":{"language":"English","mood":"x"}}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"completion":{"values":["American","British"],"hasMore":true}}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"language","value":"G"}}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"completion":{"values":["Gujarati"]}}}`,
		`> {"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"file:///logs/{service}"},"argument":{"name":"service","value":"a"}}}`,
		`< {"jsonrpc":"2.0","id":6,"result":{"completion":{"values":["api","auth",""]}}}`,
		`> {"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"tone","value":""}}}`,
		`< {"jsonrpc":"2.0","id":7,"result":{"completion":{"values":["formal"]}}}`,
		`> {"jsonrpc":"2.0","id":8,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"ghost"},"argument":{"name":"a","value":""}}}`,
		`< {"jsonrpc":"2.0","id":8,"result":{"completion":{"values":["boo"]}}}`,
	))
	scriptHas(t, out,
		"resourceTemplates:\n  - uriTemplate: file:///logs/{service}\n",
		`Completions of "tone" were recorded, which it does not list: left out.`,
		`Completions of prompt "ghost", argument "a", were recorded, but not the prompt: left out.`,
	)
	c := newClient(t, s)
	caps := c.result("initialize", map[string]any{"protocolVersion": "2025-11-25"})["capabilities"].(map[string]any)
	if _, ok := caps["completions"]; !ok {
		t.Errorf("the script declares %v, without completions", caps)
	}
	for _, tt := range []struct{ params, want string }{
		{`{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"language","value":"G"}}`, `{"total":2,"values":["German","Greek"]}`},
		{`{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"dialect","value":""},"context":{"arguments":{"language":"English"}}}`, `{"hasMore":true,"values":["American","British"]}`},
		{`{"ref":{"type":"ref/resource","uri":"file:///logs/{service}"},"argument":{"name":"service","value":"a"}}`, `{"total":2,"values":["api","auth"]}`},
		{`{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"language","value":"Fr"}}`, `{"total":0,"values":[]}`},
	} {
		res := c.result("completion/complete", json.RawMessage(tt.params))
		if got, _ := json.Marshal(res["completion"]); string(got) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.params, got, tt.want)
		}
	}
	if !strings.Contains(string(out), "complete:") {
		t.Errorf("no complete in\n%s", out)
	}
}

// TestFromTape_TemplateEventsCrossed: one resources/list_changed stands
// for resources and templates alike. After deploy the client listed only
// the templates, which had changed; after publish, only the resources.
// Each change is due after the call whose notification its kind's
// listing explains, not after the first notification since the kind was
// last listed: the resources changed at publish, not at deploy.
func TestFromTape_TemplateEventsCrossed(t *testing.T) {
	s, out := generated(t, tapeOf(store.SessionInfo{ID: "s1"},
		`> {"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///readme","name":"readme"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":[{"uriTemplate":"logs:///{day}","name":"logs"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"deployed"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
		`> {"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"resourceTemplates":[{"uriTemplate":"logs:///{day}","name":"logs"},{"uriTemplate":"builds:///{branch}","name":"builds"}]}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"publish","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"published"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
		`> {"jsonrpc":"2.0","id":6,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":6,"result":{"resources":[{"uri":"file:///readme","name":"readme"},{"uri":"file:///release","name":"release"}]}}`,
	))
	c := newClient(t, s)
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.result("tools/call", toolCall("deploy", nil))
	if got := c.listed("resources/templates/list", "resourceTemplates", "uriTemplate"); got != "logs:///{day} builds:///{branch}" {
		t.Errorf("templates after deploy: %s\n%s", got, out)
	}
	if got := c.listed("resources/list", "resources", "uri"); got != "file:///readme" {
		t.Errorf("resources after deploy: %s, want them unchanged until publish\n%s", got, out)
	}
	c.result("tools/call", toolCall("publish", nil))
	if got := c.listed("resources/list", "resources", "uri"); got != "file:///readme file:///release" {
		t.Errorf("resources after publish: %s\n%s", got, out)
	}
}
