package script

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSession_Handshake(t *testing.T) {
	s := mustLoad(t, "script-basic.yaml")
	tests := []struct {
		name, asked, want string
	}{
		{"echoes a supported version", "2025-06-18", "2025-06-18"},
		{"oldest", "2024-11-05", "2024-11-05"},
		{"unknown version gets the newest handshake version", "2099-01-01", "2025-11-25"},
		{"the stateless version is not negotiated by initialize", "2026-07-28", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, s)
			res := c.result("initialize", map[string]any{"protocolVersion": tt.asked, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
			if res["protocolVersion"] != tt.want {
				t.Errorf("protocolVersion = %v, want %s", res["protocolVersion"], tt.want)
			}
			info := res["serverInfo"].(map[string]any)
			if info["name"] != "demo-tools" || info["title"] != "Demo tools" || info["version"] != "1.2.0" {
				t.Errorf("serverInfo = %v", info)
			}
			if res["instructions"] != "A scripted server for testing MCP hosts." {
				t.Errorf("instructions = %v", res["instructions"])
			}
		})
	}
}

func TestSession_Discover(t *testing.T) {
	s := mustLoad(t, "script-basic.yaml")
	c := newClient(t, s)
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	res := c.result("server/discover", map[string]any{"_meta": meta})
	vs, _ := json.Marshal(res["supportedVersions"])
	if string(vs) != `["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]` {
		t.Errorf("supportedVersions = %s", vs)
	}
	if res["resultType"] != "complete" {
		t.Errorf("resultType = %v", res["resultType"])
	}
	if info := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any); info["name"] != "demo-tools" {
		t.Errorf("serverInfo = %v", info)
	}
	// A stateless tools/call carries its version in _meta.
	res = c.result("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}, "_meta": meta})
	if got := firstText(t, res); got != "Hello, Ada! (call 1)" {
		t.Errorf("text = %q", got)
	}
	// An unsupported version is refused with the supported list.
	r, _ := c.ask("tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2030-01-01"}})
	if r.Error == nil || r.Error.Code != -32022 || !strings.Contains(string(r.Error.Data), `"supported"`) {
		t.Errorf("unsupported version: %+v", r.Error)
	}

	// A 2026-07-28-only script refuses initialize, and a request that
	// names no version (as over HTTP, where it gets the same error).
	only, err := Parse("only.yaml", []byte("server: {name: s, version: \"1\", protocolVersions: [\"2026-07-28\"]}\ntools: [{name: t, answers: [{text: x}]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	oc := newClient(t, only)
	if r, _ := oc.ask("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}); r.Error == nil || r.Error.Code != -32022 {
		t.Errorf("initialize of a 2026-07-28-only script: %+v", r)
	}
	if r, _ := oc.ask("tools/call", map[string]any{"name": "t"}); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "must carry _meta") {
		t.Errorf("a call without _meta's version: %+v, want -32602", r)
	}
	if got := firstText(t, oc.result("tools/call", map[string]any{"name": "t", "_meta": meta})); got != "x" {
		t.Errorf("a call with it: %q", got)
	}

	// A handshake-only script sends 2026-07-28 clients to initialize.
	js := mustLoad(t, "script-json.json")
	r, _ = newClient(t, js).ask("server/discover", nil)
	if r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("discover on a handshake-only script: %+v", r)
	}
}

func TestSession_Pagination(t *testing.T) {
	s := mustLoad(t, "script-basic.yaml")
	c := newClient(t, s)
	var names []string
	var cursor any
	pages := 0
	for {
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = cursor
		}
		res := c.result("tools/list", params)
		pages++
		for _, tl := range res["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		cursor = res["nextCursor"]
		if cursor == nil {
			break
		}
	}
	if got := strings.Join(names, ","); got != "greet,weather,picture,add,shout" || pages != 3 {
		t.Errorf("tools %s in %d pages", got, pages)
	}
	// A null cursor is none: the first page.
	if res := c.result("tools/list", map[string]any{"cursor": nil}); len(res["tools"].([]any)) != 2 || res["nextCursor"] == nil {
		t.Errorf("cursor null: %v, want the first page", res)
	}
	// Not ours: garbage, a number, another list's, a negative rank, a rank
	// written another way, a rank with another item's name, the old
	// offset form, a rank past the end, ranks no page ends at (0, 4: the
	// last item, after which there is nothing to list).
	for _, bad := range []any{"nope", 12, "bWNwbW9jazpwcm9tcHRzOjE6d2VhdGhlcg", "bWNwbW9jazp0b29sczotMTpncmVldA",
		"bWNwbW9jazp0b29sczowMTp3ZWF0aGVy", "bWNwbW9jazp0b29sczoxOmdyZWV0", "bWNwbW9jazp0b29sczox",
		"bWNwbW9jazp0b29sczo5ODp4", "bWNwbW9jazp0b29sczowOmdyZWV0", "bWNwbW9jazp0b29sczo0OnNob3V0"} {
		r, _ := c.ask("tools/list", map[string]any{"cursor": bad})
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "invalid cursor") {
			t.Errorf("cursor %v: %+v", bad, r)
		}
	}
}

// TestSession_CursorsAcrossEvents: a cursor keeps its place when events
// change the list, in the session that issued it; a fresh session takes
// the cursors any session would issue, and refuses the rest.
func TestSession_CursorsAcrossEvents(t *testing.T) {
	s, err := Parse("pages.yaml", []byte(`server: {name: s, version: "1", pageSize: 2}
tools:
  - {name: cut, answers: [{text: cut}]}
  - {name: a, answers: [{text: a}]}
  - {name: b, answers: [{text: b}]}
  - {name: c, answers: [{text: c}]}
  - {name: d, answers: [{text: d}]}
events:
  - after: {tool: cut, calls: 1}
    removeTools: [a, b, c, d]
    addTools: [{name: e, answers: [{text: e}]}, {name: f, answers: [{text: f}]}, {name: g, answers: [{text: g}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	page := func(c *client, cursor any) (names string, next any) {
		t.Helper()
		res := c.result("tools/list", map[string]any{"cursor": cursor})
		var n []string
		for _, tl := range res["tools"].([]any) {
			n = append(n, tl.(map[string]any)["name"].(string))
		}
		return strings.Join(n, ","), res["nextCursor"]
	}
	c := newClient(t, s)
	_, afterA := page(c, nil)
	_, afterC := page(c, afterA)
	c.result("tools/call", toolCall("cut", nil))
	// The cursor's item and every one before it are gone: the page goes
	// on with what was added since.
	if got, next := page(c, afterC); got != "e,f" || next == nil {
		t.Errorf("after c, once a-d went: %s, next %v; want e,f and a cursor", got, next)
	}
	// A cursor handed out before the event is as good as ever.
	if got, _ := page(c, afterA); got != "e,f" {
		t.Errorf("after a, once a-d went: %s, want e,f", got)
	}
	_, afterE := page(c, nil) // cut, e
	if got, next := page(c, afterE); got != "f,g" || next != nil {
		t.Errorf("after e: %s, next %v; want f,g and none", got, next)
	}

	// Another session has the script's list: the first page's cursor is
	// one it would issue, so a client paging over two connections
	// (sessions: false) carries on. A cursor after e, which only an
	// event of the first session made, is none of its.
	fresh := newClient(t, s)
	if got, _ := page(fresh, afterA); got != "b,c" {
		t.Errorf("fresh session after a: %s, want b,c", got)
	}
	r, _ := fresh.ask("tools/list", map[string]any{"cursor": afterE})
	if r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("fresh session, a cursor after e: %+v, want -32602", r)
	}
}

func TestSession_ToolFields(t *testing.T) {
	s := mustLoad(t, "script-basic.yaml")
	res := newClient(t, s).result("tools/list", nil)
	greet, _ := json.Marshal(res["tools"].([]any)[0])
	want := `{"_meta":{"example.com/owner":"docs"},"annotations":{"idempotentHint":true,"readOnlyHint":true},"description":"Says hello to someone.","icons":[{"mimeType":"image/png","src":"https://example.com/greet.png"}],"inputSchema":{"properties":{"name":{"description":"Who to greet","type":"string"}},"required":["name"],"type":"object"},"name":"greet","title":"Greeter"}`
	if string(greet) != want {
		t.Errorf("greet =\n%s\nwant\n%s", greet, want)
	}
}

func TestSession_Answers(t *testing.T) {
	tests := []struct {
		file, tool string
		args       any
		want       string // text of the first block, or "error CODE: message"
		isError    bool
	}{
		{"script-basic.yaml", "greet", map[string]any{"name": "Bo"}, "Hello, Bo! (call 1)", false},
		{"script-basic.yaml", "add", map[string]any{"a": 2, "b": 3.5}, "2 + 3.5", false},
		{"script-basic.yaml", "shout", map[string]any{"text": "hi"}, "HI", false},
		{"script-basic.yaml", "weather", map[string]any{"city": "Paris"}, `{"celsius":21.5,"city":"Paris"}`, false},
		{"script-match.yaml", "lookup", map[string]any{"id": 1}, "user one", false},
		{"script-match.yaml", "lookup", map[string]any{"id": 1, "name": "x"}, "no such user", false},
		{"script-match.yaml", "lookup", map[string]any{"id": 7, "options": map[string]any{"verbose": true, "x": 1}}, "verbose lookup of 7", false},
		{"script-match.yaml", "lookup", map[string]any{"name": "admin"}, "admin is reserved", true},
		{"script-match.yaml", "lookup", map[string]any{"name": "bob"}, "no such user", false},
		{"script-errors.yaml", "divide", map[string]any{"a": 1, "b": 0}, "division by zero", true},
		{"script-errors.yaml", "divide", map[string]any{"a": 1}, `invalid arguments for tool "divide"`, true},
		{"script-errors.yaml", "divide", map[string]any{"a": 1, "b": 2, "c": 3}, `invalid arguments for tool "divide"`, true},
		{"script-errors.yaml", "strict", map[string]any{"count": 0}, `error -32602: invalid arguments for tool "strict"`, false},
		{"script-errors.yaml", "broken", map[string]any{"q": "x"}, `error -32000: upstream said no to {"q":"x"}`, false},
		{"script-errors.yaml", "nope", nil, `error -32602: tools/call: unknown tool "nope"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.tool, func(t *testing.T) {
			c := newClient(t, mustLoad(t, tt.file))
			r, ok := c.ask("tools/call", toolCall(tt.tool, tt.args))
			if !ok {
				t.Fatal("not answered")
			}
			if r.Error != nil {
				got := "error " + itoa(r.Error.Code) + ": " + r.Error.Message
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("got %q, want prefix %q", got, tt.want)
				}
				return
			}
			var res map[string]any
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatal(err)
			}
			if got := firstText(t, res); !strings.HasPrefix(got, tt.want) {
				t.Errorf("text %q, want prefix %q", got, tt.want)
			}
			if isErr, _ := res["isError"].(bool); isErr != tt.isError {
				t.Errorf("isError = %v, want %v", isErr, tt.isError)
			}
		})
	}
}

// Template functions take any value, a missing argument as empty, and a
// template that fails says where and how to guard it.
func TestSession_TemplatesOfMissingArguments(t *testing.T) {
	s, err := Parse("tpl.yaml", []byte(`
tools:
  - name: shout
    answers: [{text: "{{upper .args.text}}|{{lower .args.n}}|{{trim .args.s}}|{{.args.gone}}"}]
  - name: nested
    answers: [{text: "{{.args.o.inner}}"}]
  - name: guarded
    answers: [{text: "[{{with .args.o}}{{.inner}}{{end}}]"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	if got := firstText(t, c.result("tools/call", toolCall("shout", map[string]any{"n": 3, "s": " a "}))); got != "|3|a|<no value>" {
		t.Errorf("shout = %q, want %q", got, "|3|a|<no value>")
	}
	if got := firstText(t, c.result("tools/call", toolCall("guarded", map[string]any{}))); got != "[]" {
		t.Errorf("guarded = %q, want %q", got, "[]")
	}
	r, _ := c.ask("tools/call", toolCall("nested", map[string]any{}))
	if r.Error == nil {
		t.Fatalf("nested without o: %s, want an error", r.Result)
	}
	for _, want := range []string{"at 1:7: <.args.o.inner>", "guard it with {{with}}"} {
		if !strings.Contains(r.Error.Message, want) {
			t.Errorf("error %q does not say %q", r.Error.Message, want)
		}
	}
	if strings.Contains(r.Error.Message, "template: template") {
		t.Errorf("error %q says template twice", r.Error.Message)
	}
}

func TestSession_InvalidArgumentsNameTheField(t *testing.T) {
	c := newClient(t, mustLoad(t, "script-errors.yaml"))
	for _, tc := range []struct {
		args  map[string]any
		field string
	}{
		{map[string]any{"a": 1}, "b"},
		{map[string]any{"a": "x", "b": 1}, "a"},
		{map[string]any{"a": 1, "b": 2, "extra": true}, "extra"},
	} {
		res := c.result("tools/call", toolCall("divide", tc.args))
		if got := firstText(t, res); !strings.Contains(got, tc.field) {
			t.Errorf("args %v: message %q does not name %q", tc.args, got, tc.field)
		}
	}
}

func TestSession_Sequence(t *testing.T) {
	c := newClient(t, mustLoad(t, "script-match.yaml"))
	r, _ := c.ask("tools/call", toolCall("flaky", nil))
	if r.Error == nil || r.Error.Message != "backend unavailable (call 1)" {
		t.Fatalf("first call: %+v", r)
	}
	res := c.result("tools/call", toolCall("flaky", nil))
	if firstText(t, res) != "still warming up" || res["isError"] != true {
		t.Fatalf("second call: %v", res)
	}
	for range 3 {
		if got := firstText(t, c.result("tools/call", toolCall("flaky", nil))); got != "ok" {
			t.Fatalf("later call: %q", got)
		}
	}
	// A new session starts over.
	c = newClient(t, mustLoad(t, "script-match.yaml"))
	if r, _ := c.ask("tools/call", toolCall("flaky", nil)); r.Error == nil {
		t.Fatal("new session did not start from the first answer")
	}
}

// Which calls count, for sequence (and events): a call with invalid
// arguments does, as the host did call; a 2026-07-28 call answered
// input_required for its elicit does not, as the retry that follows is
// the same call.
func TestSession_CallsThatCount(t *testing.T) {
	s, err := Parse("count.yaml", []byte(`
tools:
  - name: step
    inputSchema: {type: object, properties: {n: {type: integer}}, required: [n]}
    sequence: [{text: one}, {text: two}, {text: three}]
  - name: asks
    elicit: {message: "ok?", requestedSchema: {type: object, properties: {ok: {type: boolean}}}}
    sequence: [{text: first}, {text: second}]
`))
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	if r := c.result("tools/call", toolCall("step", map[string]any{})); r["isError"] != true {
		t.Fatalf("invalid arguments: %v", r)
	}
	if got := firstText(t, c.result("tools/call", toolCall("step", map[string]any{"n": 1}))); got != "two" {
		t.Errorf("the call after one with invalid arguments got %q, want the second answer", got)
	}
	meta := map[string]any{metaVersion: statelessVersion}
	first := c.result("tools/call", map[string]any{"name": "asks", "_meta": meta})
	if first["resultType"] != "input_required" {
		t.Fatalf("first round: %v", first)
	}
	retry := c.result("tools/call", map[string]any{"name": "asks", "_meta": meta, "inputResponses": map[string]any{elicitKind.key: map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}})
	if got := firstText(t, retry); got != "first" {
		t.Errorf("the retry got %q, want the first answer: the input_required round is no call", got)
	}
}
