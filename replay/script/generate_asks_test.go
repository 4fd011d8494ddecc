package script

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// askFrames: a handshake-era session in which the server asked its client
// before answering: an elicitation accepted, then declined, for the same
// arguments; a sampling request whose text carries an argument; roots.
var askFrames = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"asker","version":"1.0.0"}}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`,
	`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"Deploy {{api}}?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}`,
	`> {"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"confirm":true}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"deployed api"}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`,
	`< {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Deploy {{api}}?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}`,
	`> {"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"not deployed"}],"isError":true}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"a long story"}}}`,
	`< {"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Summarize: a long story"}}],"systemPrompt":"Be brief.","maxTokens":50,"temperature":0.5}}`,
	`> {"jsonrpc":"2.0","id":2,"result":{"role":"assistant","model":"m1","content":{"type":"text","text":"short"}}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"summary: short"}]}}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"another tale"}}}`,
	`< {"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Summarize: another tale"}}],"systemPrompt":"Be brief.","maxTokens":50,"temperature":0.5}}`,
	`> {"jsonrpc":"2.0","id":3,"result":{"role":"assistant","model":"m1","content":{"type":"text","text":"tale"}}}`,
	`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"summary: tale"}]}}`,
	`> {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"workspace","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":4,"method":"roots/list"}`,
	`> {"jsonrpc":"2.0","id":4,"result":{"roots":[{"uri":"file:///w"}]}}`,
	`< {"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"1 root"}]}}`,
	// A request the client sent on its own is no question of a call.
	`< {"jsonrpc":"2.0","id":5,"method":"ping"}`,
	`> {"jsonrpc":"2.0","id":5,"result":{}}`,
}

// TestFromTape_Asks: what a recorded server asked its client during a
// call becomes the tool's elicit, sample and roots, and the elicited
// action chooses among its answers, as it chose the server's.
func TestFromTape_Asks(t *testing.T) {
	s, out := generated(t, tapeOf(generateInfo, askFrames...))
	text := string(out)
	for _, want := range []string{
		`message: Deploy {{"{{"}}api}}?`,
		`when: {exact: {service: api}, elicited: {action: accept}}`,
		`when: {exact: {service: api}, elicited: {action: decline}}`,
		`text: 'Summarize: {{.args.text}}'`, // both calls rendered by one template
		"systemPrompt: Be brief.",
		"maxTokens: 50",
		"roots: true",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the script lacks %s:\n%s", want, out)
		}
	}
	c := newClient(t, s)
	var replies = map[string]string{
		"elicitation/create":     `{"action":"decline"}`,
		"sampling/createMessage": `{"role":"assistant","model":"m2","content":{"type":"text","text":"x"}}`,
		"roots/list":             `{"roots":[]}`,
	}
	c.peer.answers = func(method string, _ json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(replies[method]), nil
	}
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	call := func(name string, args map[string]any) (string, []string) {
		t.Helper()
		res := c.result("tools/call", toolCall(name, args))
		return firstText(t, res), c.peer.take()
	}
	if got, sent := call("deploy", map[string]any{"service": "api"}); got != "not deployed" || len(sent) != 1 || !strings.Contains(sent[0], `"message":"Deploy {{api}}?"`) {
		t.Errorf("deploy, declined: %q after asking %q", got, sent)
	}
	replies["elicitation/create"] = `{"action":"accept","content":{"confirm":true}}`
	if got, _ := call("deploy", map[string]any{"service": "api"}); got != "deployed api" {
		t.Errorf("deploy, accepted: %q", got)
	}
	replies["elicitation/create"] = `{"action":"cancel"}`
	if got, _ := call("deploy", map[string]any{"service": "api"}); got != `mcpmock script: no answer of tool "deploy" matches the arguments {"service":"api"} and the client's answer {"action":"cancel"}; nearest: the answer at line 24: elicited.action is "cancel", want "accept"` {
		t.Errorf("deploy, cancelled: %q", got)
	}
	if _, sent := call("summarize", map[string]any{"text": "a third"}); len(sent) != 1 || !strings.Contains(sent[0], `"text":"Summarize: a third"`) {
		t.Errorf("summarize asked %q, want the model asked about its argument", sent)
	}
	if got, sent := call("workspace", map[string]any{}); got != "1 root" || len(sent) != 1 || !strings.HasPrefix(sent[0], "call roots/list") {
		t.Errorf("workspace: %q after asking %q", got, sent)
	}
}

// TestFromTape_AsksFirstRound: in 2026-07-28 the questions are the
// inputRequests of a first round, under keys the server chose, and the
// replies the retry's inputResponses.
func TestFromTape_AsksFirstRound(t *testing.T) {
	s, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"},"inputResponses":{"q1":{"action":"accept","content":{"ok":true}}}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`,
	))
	for _, want := range []string{"message: Sure?", "elicited: {action: accept}"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script lacks %s:\n%s", want, out)
		}
	}
	c := newClient(t, s)
	call := toolCall("deploy", map[string]any{"service": "api"})
	call["_meta"] = map[string]any{metaVersion: statelessVersion}
	first := c.result("tools/call", call)
	if first["resultType"] != "input_required" {
		t.Fatalf("first round: %v", first)
	}
	retry := call
	retry["inputResponses"] = map[string]any{"elicitation": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
	if got := firstText(t, c.result("tools/call", retry)); got != "done" {
		t.Errorf("retry: %q", got)
	}
}

// An elicitation that does not load as a script (no message) is left
// out with a note, and the answers do not depend on its reply.
func TestFromTape_AskLeftOut(t *testing.T) {
	s, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy"}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"requestedSchema":{"type":"object"}}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`,
	))
	if !strings.Contains(string(out), "Its recorded elicit (s1 seq 1) is left out: ") || strings.Contains(string(out), "elicited") {
		t.Errorf("the script:\n%s", out)
	}
	c := newClient(t, s)
	if got := firstText(t, c.result("tools/call", toolCall("deploy", nil))); got != "done" {
		t.Errorf("deploy: %q", got)
	}
}

// Over HTTP a question goes on the stream of the call it belongs to,
// which tells it even while other calls are in flight.
func TestFromTape_AsksOnStream(t *testing.T) {
	tape := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"action":"decline"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"declined"}]}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slow done"}]}}`,
	)
	m := tape.Sessions[0].Messages
	for i, stream := range []uint64{1, 2, 2, 3, 2, 1} {
		m[i].HTTP = &store.HTTPMeta{Method: "POST", Status: 200, StreamID: stream}
	}
	_, out := generated(t, tape)
	slow, deploy, _ := strings.Cut(string(out), "- name: deploy")
	if strings.Contains(slow, "elicit") || !strings.Contains(deploy, "message: Sure?") || !strings.Contains(deploy, "elicited: {action: decline}") {
		t.Errorf("the question is not deploy's alone:\n%s", out)
	}
}

// Prompts and resources that asked the client first get the question,
// and answers chosen by the user's action, as tools do; in 2026-07-28
// their first round is no fetch of their own.
func TestFromTape_AsksFromPromptsAndResources(t *testing.T) {
	schema := `"requestedSchema":{"type":"object","properties":{"language":{"type":"string"}}}`
	s, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"translate","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"Which language?",`+schema+`}}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"language":"fr"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Translate into fr: hi"}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"translate","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Which language?",`+schema+`}}`,
		`> {"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}`,
		`< {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no language"}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///secret.env"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"allow":{"method":"elicitation/create","params":{"message":"Read it?","requestedSchema":{"type":"object","properties":{}}}}}}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///secret.env","inputResponses":{"allow":{"action":"accept","content":{}}}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","contents":[{"uri":"file:///secret.env","text":"KEY={{x}}"}]}}`,
	))
	for _, want := range []string{
		"message: Which language?",
		"message: Read it?",
		`- when: {elicited: {action: decline}}`,
		"code: -32602\n          message: no language",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script lacks %s:\n%s", want, out)
		}
	}
	c := newClient(t, s)
	reply := `{"action":"decline"}`
	c.peer.answers = func(string, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(reply), nil }
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	get := map[string]any{"name": "translate", "arguments": map[string]any{"text": "hi"}}
	if r, _ := c.ask("prompts/get", get); r.Error == nil || r.Error.Message != "no language" {
		t.Errorf("translate, declined: %+v", r)
	}
	reply = `{"action":"accept","content":{"language":"de"}}`
	if got, _ := json.Marshal(c.result("prompts/get", get)); !strings.Contains(string(got), "Translate into fr: hi") {
		t.Errorf("translate, accepted: %s", got)
	}
	reply = `{"action":"accept","content":{}}`
	if got, _ := json.Marshal(c.result("resources/read", map[string]any{"uri": "file:///secret.env"})); !strings.Contains(string(got), `"text":"KEY={{x}}"`) {
		t.Errorf("secret.env, allowed: %s", got)
	}
	if sent := strings.Join(c.peer.take(), "\n"); strings.Count(sent, "call elicitation/create") != 3 || !strings.Contains(sent, `"message":"Read it?"`) {
		t.Errorf("the client was asked\n%s\nwant three elicitations, the last about the resource", sent)
	}
}

// A 2026-07-28 retry recorded in another session than its first round
// (another HTTP connection) is tied to it by the requestState it echoes.
func TestFromTape_AsksRetryElsewhere(t *testing.T) {
	first := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"rs-1","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}}}}`,
	)
	info := generateInfo
	info.ID = "s2"
	retry := tapeOf(info,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{},"requestState":"rs-1","inputResponses":{"q":{"action":"decline"}}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"not deployed"}]}}`,
	)
	tape := &store.Tape{Sessions: append(first.Sessions, retry.Sessions...)}
	_, out := generated(t, tape)
	for _, want := range []string{"message: Sure?", "elicited: {action: decline}"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script lacks %s:\n%s", want, out)
		}
	}
}

// A url-mode elicitation becomes an elicit in mode url, its url a
// template over the argument it carried, and complete: true when the
// server said the user had finished before it answered.
func TestFromTape_AsksURLMode(t *testing.T) {
	call := func(id int, service string) []string {
		return []string{
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"connect","arguments":{"service":%q}}}`, id, service),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"mode":"url","message":"Sign in to %s","url":"https://auth.example.com/start?service=%s","elicitationId":"e%d"}}`, 100+id, service, service, id),
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"result":{"action":"accept"}}`, 100+id),
			fmt.Sprintf(`< {"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e%d"}}`, id),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"connected"}]}}`, id),
		}
	}
	s, out := generated(t, tapeOf(generateInfo, append(call(1, "github"), call(2, "gitlab")...)...))
	for _, want := range []string{
		"mode: url",
		"message: Sign in to {{.args.service}}",
		"url: https://auth.example.com/start?service={{.args.service}}",
		"complete: true",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script lacks %s:\n%s", want, out)
		}
	}
	c := newClient(t, s)
	c.peer.answers = func(string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if got := firstText(t, c.result("tools/call", toolCall("connect", map[string]any{"service": "bitbucket"}))); got != "connected" {
		t.Errorf("connect: %q", got)
	}
	sent := strings.Join(c.peer.take(), "\n")
	if !strings.Contains(sent, `"url":"https://auth.example.com/start?service=bitbucket"`) || !strings.Contains(sent, "notifications/elicitation/complete") {
		t.Errorf("the client was sent\n%s\nwant the url for its own argument, then the completion", sent)
	}
}
