package script_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// TestGoSDK_FromTapeTemplateEvents: a recording whose resource templates
// changed after a call, announced with resources/list_changed (the spec's
// one notification for resources and their templates), becomes a script
// whose event changes the templates after that call. One notification
// pairs with whichever listings follow it: after deploy only the
// templates changed, after publish the resources and the templates. A
// go-sdk client lists the templates before and after each call and sees
// the recorded change, hears list_changed, and completes a variable of
// the template the event adds as the server completed it.
func TestGoSDK_FromTapeTemplateEvents(t *testing.T) {
	tape := script.TapeOf(store.SessionInfo{ID: "s1"},
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{"listChanged":true},"completions":{}},"serverInfo":{"name":"ci","version":"1.0.0"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///readme","name":"readme"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":[{"uriTemplate":"logs:///{day}","name":"logs"},{"uriTemplate":"old:///{id}","name":"old"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"deployed"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
		`> {"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"resources":[{"uri":"file:///readme","name":"readme"}]}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"resourceTemplates":[{"uriTemplate":"logs:///{day}","name":"logs"},{"uriTemplate":"builds:///{branch}","name":"builds"}]}}`,
		`> {"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"builds:///{branch}"},"argument":{"name":"branch","value":"ma"}}}`,
		`< {"jsonrpc":"2.0","id":6,"result":{"completion":{"values":["main","maintenance"]}}}`,
		`> {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"publish","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"published"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
		`> {"jsonrpc":"2.0","id":8,"method":"resources/templates/list"}`,
		`< {"jsonrpc":"2.0","id":8,"result":{"resourceTemplates":[{"uriTemplate":"logs:///{day}","name":"logs","title":"Logs"},{"uriTemplate":"builds:///{branch}","name":"builds"}]}}`,
		`> {"jsonrpc":"2.0","id":9,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":9,"result":{"resources":[{"uri":"file:///readme","name":"readme"},{"uri":"file:///release","name":"release"}]}}`,
	)
	path, out := scriptFile(t, "templates.yaml", tape)
	script.ScriptHas(t, out,
		"after: {tool: deploy, calls: 1}",
		"removeResourceTemplates: ['old:///{id}']",
		"addResourceTemplates:\n      - uriTemplate: builds:///{branch}",
		"after: {tool: publish, calls: 1}",
	)
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs, changed := connectHearing(t, tc, path)
			if got := templateNames(t, cs); got != "logs:///{day} old:///{id}" {
				t.Fatalf("templates before deploy: %s\n%s", got, out)
			}
			callHearing(t, cs, "deploy", changed)
			if got := templateNames(t, cs); got != "logs:///{day} builds:///{branch}" {
				t.Errorf("templates after deploy: %s\n%s", got, out)
			}
			if got := resourceURIs(t, cs); got != "file:///readme" {
				t.Errorf("resources after deploy: %s\n%s", got, out)
			}
			if got := completeVar(t, cs, "builds:///{branch}", "branch", "ma"); got != "main maintenance" {
				t.Errorf("completion of the added template's branch: %q", got)
			}
			callHearing(t, cs, "publish", changed)
			lt, err := cs.ListResourceTemplates(ctxT(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := lt.ResourceTemplates[0].Title; got != "Logs" {
				t.Errorf("after publish, logs has title %q, want the recorded change to Logs\n%s", got, out)
			}
			if got := resourceURIs(t, cs); got != "file:///readme file:///release" {
				t.Errorf("resources after publish: %s\n%s", got, out)
			}
		})
	}
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListResources(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return joinKeys(res.Resources, func(r *mcp.Resource) string { return r.URI })
}

// joinKeys is the key of each of items, in order, joined by spaces.
func joinKeys[T any](items []T, key func(T) string) string {
	keys := make([]string, 0, len(items))
	for _, it := range items {
		keys = append(keys, key(it))
	}
	return strings.Join(keys, " ")
}
