package script

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// tapeOf builds a one-session tape from frames, each prefixed "> " (client
// to server) or "< " (server to client).
func tapeOf(info store.SessionInfo, frames ...string) *store.Tape {
	s := store.TapeSession{Info: info}
	for i, f := range frames {
		dir := store.C2S
		if strings.HasPrefix(f, "< ") {
			dir = store.S2C
		}
		s.Messages = append(s.Messages, &store.Message{Session: info.ID, Seq: uint64(i + 1), Dir: dir, Frame: []byte(f[2:])})
	}
	return &store.Tape{Sessions: []store.TapeSession{s}}
}

var generateInfo = store.SessionInfo{ID: "s1", Handshake: store.Handshake{
	ServerInfo:   json.RawMessage(`{"name":"weather","version":"2.1.0","title":"Weather"}`),
	Instructions: "Ask about the weather.\nOne city at a time.",
}}

// generateFrames is a session with a bit of everything a script can say.
var generateFrames = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"forecast","description":"Forecast","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},{"name":"report","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}}],"nextCursor":"p2"}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"flaky","inputSchema":{"type":"object"}},{"name":"unused","title":"Unused","inputSchema":{"type":"object"}}]}}`,
	// Two cities, one asked twice with another answer the second time.
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Paris"},"_meta":{"progressToken":"t3"}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t3","progress":1,"total":2,"message":"asking {{the sky}}"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"looked up Paris"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t3","progress":2,"total":2}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Sunny {{in Paris}}"}]}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}`,
	`< {"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"no data for Oslo","data":{"retry":true}}}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Paris"}}}`,
	`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Rain"}]}}`,
	// One set of arguments, three answers: a sequence.
	`> {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"flaky"}}`,
	`< {"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"busy"}],"isError":true}}`,
	`> {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"flaky","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}}`,
	`> {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"flaky"}}`,
	`< {"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"ok"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}}`,
	// A result that breaks the tool's own outputSchema.
	`> {"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"report","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"{\"temp\":\"warm\"}"}],"structuredContent":{"temp":"warm"}}}`,
	// A tool never listed, asked in two rounds (2026-07-28), and one never answered.
	`> {"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"confirm","arguments":{"x":1}}}`,
	`< {"jsonrpc":"2.0","id":10,"result":{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{}}}}}`,
	`> {"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"confirm","arguments":{"x":1},"inputResponses":{"e":{"action":"accept"}}}}`,
	`< {"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"confirmed"}],"resultType":"complete"}}`,
	`> {"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	// Resources and prompts.
	`> {"jsonrpc":"2.0","id":13,"method":"resources/list"}`,
	`< {"jsonrpc":"2.0","id":13,"result":{"resources":[{"uri":"file:///a.txt","name":"a","mimeType":"text/plain"},{"uri":"file:///b.png","name":"b"},{"uri":"file:///c","name":"c"}]}}`,
	`> {"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"file:///a.txt"}}`,
	`< {"jsonrpc":"2.0","id":14,"result":{"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","text":"line one\nline two {{x}}\n"}]}}`,
	`> {"jsonrpc":"2.0","id":15,"method":"resources/read","params":{"uri":"file:///b.png"}}`,
	`< {"jsonrpc":"2.0","id":15,"result":{"contents":[{"uri":"file:///b.png","blob":"iVBORw0KGgo="}]}}`,
	`> {"jsonrpc":"2.0","id":16,"method":"prompts/list"}`,
	`< {"jsonrpc":"2.0","id":16,"result":{"prompts":[{"name":"brief","arguments":[{"name":"city","required":true}]},{"name":"never"}]}}`,
	`> {"jsonrpc":"2.0","id":17,"method":"prompts/get","params":{"name":"brief","arguments":{"city":"Rome"}}}`,
	`< {"jsonrpc":"2.0","id":17,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Brief me on {{Rome}}"}},{"role":"assistant","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}]}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`not json at all`,
}

// TestFromTape: the script made from a recording loads, lists what the
// server listed, and answers each recorded call as the server did.
func TestFromTape(t *testing.T) {
	out, err := FromTape(tapeOf(generateInfo, generateFrames...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("generated.yaml", out)
	if err != nil {
		t.Fatalf("the generated script does not load: %v\n%s", err, out)
	}
	scriptHas(t, out,
		"  instructions: |-\n    Ask about the weather.\n    One city at a time.\n", // a block, as a person writes it
		"  pageSize: 2\n",
		"Later calls with these arguments were answered otherwise (s1 seq 12)",
		"Answers by call count, as recorded; the last repeats.",
		"Its recorded outputSchema is left out",
		"# Called but never listed while recording.",
		"# Never called while recording: write its answers.",
		"# Never answered while recording.",
		"# Never read while recording: its text is empty.",
		"# Never fetched while recording: write its messages.",
		`use {{.args.NAME}} to follow them`,
		"The server announced list changes while recording",
	)

	c := newClient(t, s)
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	var names []string
	params := map[string]any{}
	for pages := 0; pages < 5; pages++ {
		res := c.result("tools/list", params)
		for _, tl := range res["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		params = map[string]any{"cursor": next}
	}
	if got := strings.Join(names, ","); got != "forecast,report,flaky,unused,confirm,slow" {
		t.Errorf("tools %s", got)
	}

	call := func(name string, args any) string {
		t.Helper()
		params := toolCall(name, args)
		params["_meta"] = map[string]any{"progressToken": 7}
		r, ok := c.ask("tools/call", params)
		if !ok {
			t.Fatalf("%s: no answer", name)
		}
		if r.Error != nil {
			b, _ := json.Marshal(r.Error)
			return "error " + string(b)
		}
		return string(r.Result)
	}
	for _, tc := range []struct {
		name string
		args any
		want string
	}{
		{"forecast", map[string]any{"city": "Paris"}, `{"content":[{"text":"Sunny {{in Paris}}","type":"text"}]}`},
		{"forecast", map[string]any{"city": "Oslo"}, `error {"code":-32603,"message":"no data for Oslo","data":{"retry":true}}`},
		{"forecast", map[string]any{"city": "Rome"}, `{"content":[{"text":"mcpmock script: no answer of tool \"forecast\" matches the arguments {\"city\":\"Rome\"}; nearest: the answer at line 23: arguments.city is \"Rome\", want \"Paris\"","type":"text"}],"isError":true}`}, // the script's own, unmatched, with the nearest recorded arguments
		{"flaky", nil, `{"content":[{"text":"busy","type":"text"}],"isError":true}`},
		{"flaky", nil, `{"content":[{"text":"ok","type":"text"},{"data":"AAAA","mimeType":"image/png","type":"image"}]}`},
		{"flaky", nil, `{"content":[{"text":"ok","type":"text"},{"data":"AAAA","mimeType":"image/png","type":"image"}]}`},
		{"report", nil, `{"content":[{"text":"{\"temp\":\"warm\"}","type":"text"}],"structuredContent":{"temp":"warm"}}`},
		{"confirm", map[string]any{"x": 1}, `{"content":[{"text":"confirmed","type":"text"}]}`},
	} {
		if got := call(tc.name, tc.args); got != tc.want {
			t.Errorf("%s %v:\n got %s\nwant %s", tc.name, tc.args, got, tc.want)
		}
	}
	if sent := strings.Join(c.peer.take(), "\n"); !strings.Contains(sent, `"message":"asking {{the sky}}"`) || !strings.Contains(sent, `"data":"looked up Paris"`) {
		t.Errorf("the Paris forecast sent\n%s\nwant its recorded progress and log", sent)
	}

	read := func(uri string) string {
		b, _ := json.Marshal(c.result("resources/read", map[string]any{"uri": uri}))
		return string(b)
	}
	if got := read("file:///a.txt"); got != `{"contents":[{"mimeType":"text/plain","text":"line one\nline two {{x}}\n","uri":"file:///a.txt"}]}` {
		t.Errorf("a.txt: %s", got)
	}
	if got := read("file:///b.png"); !strings.Contains(got, `"blob":"iVBORw0KGgo="`) {
		t.Errorf("b.png: %s", got)
	}
	got, _ := json.Marshal(c.result("prompts/get", map[string]any{"name": "brief", "arguments": map[string]any{"city": "Rome"}}))
	if want := `{"messages":[{"content":{"text":"Brief me on {{Rome}}","type":"text"},"role":"user"},{"content":{"data":"AAAA","mimeType":"image/png","type":"image"},"role":"assistant"}]}`; string(got) != want {
		t.Errorf("prompts/get brief:\n got %s\nwant %s", got, want)
	}
}

// TestFromTape_NoHandshake: a recording cut before its handshake still
// makes a script that loads, with a made-up identity said as such.
func TestFromTape_NoHandshake(t *testing.T) {
	out, err := FromTape(tapeOf(store.SessionInfo{ID: "s2"},
		`> {"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":"a","result":{}}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("generated.yaml", out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"No handshake was recorded", "name: recorded-server", "The recorded result had no content."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// FuzzFromTape: whatever was recorded, the script made from it loads.
func FuzzFromTape(f *testing.F) {
	f.Add([]byte(strings.Join(generateFrames, "\n")))
	f.Add([]byte(strings.Join(eventFrames, "\n")))
	f.Add([]byte(strings.Join(askFrames, "\n")))
	f.Add([]byte("> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":[1]}}\n< {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":\"no list\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var frames []string
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "> ") || strings.HasPrefix(line, "< ") {
				frames = append(frames, line)
			}
		}
		out, err := FromTape(tapeOf(generateInfo, frames...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("fuzz.yaml", out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

// A sequence follows the order the calls were asked in, as mcpmock counts
// them, not the order their answers came back.
func TestFromTape_CallOrder(t *testing.T) {
	out, err := FromTape(tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"second asked"}]}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"first asked"}]}}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("generated.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s)
	for _, want := range []string{"first asked", "second asked"} {
		if got := firstText(t, c.result("tools/call", toolCall("job", nil))); got != want {
			t.Errorf("got %q, want %q:\n%s", got, want, out)
		}
	}
}

// eventFrames: a server that, on the second call of unlock, drops "old",
// changes "status", adds "secret" and a resource, and says so; one call of
// status before the change and one after.
var eventFrames = []string{
	`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"locks","version":"1.0.0"}}}`,
	`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"unlock","inputSchema":{"type":"object"}},{"name":"old","inputSchema":{"type":"object"}},{"name":"status","description":"v1","inputSchema":{"type":"object"}}]}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"resources/list"}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"file:///a.txt","name":"a"}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"v1"}]}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"unlock","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"unlocked"}]}}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"unlock","arguments":{}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, // sent while the call runs
	`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"unlocked"}]}}`,
	`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
	`> {"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
	`< {"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"unlock","inputSchema":{"type":"object"}},{"name":"status","description":"v2","inputSchema":{"type":"object"}},{"name":"secret","inputSchema":{"type":"object"}}]}}`,
	`> {"jsonrpc":"2.0","id":7,"method":"resources/list"}`,
	`< {"jsonrpc":"2.0","id":7,"result":{"resources":[{"uri":"file:///a.txt","name":"a"},{"uri":"file:///late.txt","name":"late"}]}}`,
	`> {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"status","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"v2"}]}}`,
	`> {"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"secret","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"42"}]}}`,
}

// TestFromTape_Events: recorded list changes become events, due after
// the call that made them, and each version of a tool answers the calls
// asked while it was listed.
func TestFromTape_Events(t *testing.T) {
	out, err := FromTape(tapeOf(store.SessionInfo{ID: "s1"}, eventFrames...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("generated.yaml", out)
	if err != nil {
		t.Fatalf("the generated script does not load: %v\n%s", err, out)
	}
	text := string(out)
	scriptHas(t, out,
		"after: {tool: unlock, calls: 2}",
		"removeTools: [old]",
		"The server changed its lists while recording",
	)
	if strings.Contains(text, "The server announced list changes while recording") {
		t.Errorf("the changes are events, yet the foot says they are left out:\n%s", out)
	}

	c := newClient(t, s)
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	call := func(name string) string {
		t.Helper()
		return firstText(t, c.result("tools/call", toolCall(name, nil)))
	}
	if got := c.listed("tools/list", "tools", "name"); got != "unlock old status" {
		t.Errorf("first tools: %s", got)
	}
	if got := c.listed("resources/list", "resources", "uri"); got != "file:///a.txt" {
		t.Errorf("first resources: %s", got)
	}
	if got := call("status"); got != "v1" {
		t.Errorf("status before the change: %q", got)
	}
	call("unlock")
	r, _ := c.ask("tools/call", toolCall("unlock", nil))
	var sent []string
	for _, o := range r.After {
		sent = append(sent, o.Method)
	}
	if want := "notifications/tools/list_changed notifications/resources/list_changed"; strings.Join(sent, " ") != want {
		t.Errorf("after the second unlock the script sent %q, want %q", sent, want)
	}
	if got := c.listed("tools/list", "tools", "name"); got != "unlock status secret" {
		t.Errorf("tools after the change: %s", got)
	}
	if got := c.listed("resources/list", "resources", "uri"); got != "file:///a.txt file:///late.txt" {
		t.Errorf("resources after the change: %s", got)
	}
	if got := call("status"); got != "v2" {
		t.Errorf("status after the change: %q", got)
	}
	if got := call("secret"); got != "42" {
		t.Errorf("secret: %q", got)
	}
}

// TestFromTape_EventChangesInPlace: a resource and a prompt that changed
// between two listings are added again, which replaces them in their
// place, so the replayed lists after the change keep the recorded order
// (a removal first would move them to the end).
func TestFromTape_EventChangesInPlace(t *testing.T) {
	s, out := generated(t, tapeOf(store.SessionInfo{ID: "s1"},
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{"listChanged":true},"prompts":{"listChanged":true}},"serverInfo":{"name":"docs","version":"1.0.0"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a","name":"a"},{"uri":"file:///b","name":"b","title":"v1"},{"uri":"file:///c","name":"c"},{"uri":"file:///d","name":"d"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"prompts/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"prompts":[{"name":"x","title":"v1"},{"name":"y"},{"name":"z"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"edit","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"edited"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
		`< {"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
		`> {"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"resources":[{"uri":"file:///b","name":"b","title":"v2"},{"uri":"file:///d","name":"d"},{"uri":"file:///e","name":"e"}]}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"prompts/list"}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"prompts":[{"name":"x","title":"v2"},{"name":"y"},{"name":"z"}]}}`,
	))
	scriptHas(t, out, "removeResources: ['file:///a', 'file:///c']\n", "addResources:", "addPrompts:")
	if strings.Contains(string(out), "removePrompts") {
		t.Errorf("the script removes what changed instead of adding it again:\n%s", out)
	}

	c := newClient(t, s)
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	// listed is each item's key and title, as the list gave them.
	listed := func(method, section, key string) string {
		t.Helper()
		var items []string
		for _, item := range c.result(method, nil)[section].([]any) {
			m := item.(map[string]any)
			title, _ := m["title"].(string)
			items = append(items, strings.TrimSuffix(m[key].(string)+" "+title, " "))
		}
		return strings.Join(items, ", ")
	}
	c.result("tools/call", toolCall("edit", nil))
	if got, want := listed("resources/list", "resources", "uri"), "file:///b v2, file:///d, file:///e"; got != want {
		t.Errorf("resources after the change: %q, want the recorded order %q\n%s", got, want, out)
	}
	if got, want := listed("prompts/list", "prompts", "name"), "x v2, y, z"; got != want {
		t.Errorf("prompts after the change: %q, want the recorded order %q\n%s", got, want, out)
	}
}

// TestFromTape_EventsNeedOneSession: two sessions have no one point of
// change, so their lists stay merged and the foot says so.
func TestFromTape_EventsNeedOneSession(t *testing.T) {
	tape := tapeOf(store.SessionInfo{ID: "s1"}, eventFrames...)
	tape.Sessions = append(tape.Sessions, tapeOf(store.SessionInfo{ID: "s2"}, eventFrames[:4]...).Sessions...)
	out, err := FromTape(tape)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("generated.yaml", out); err != nil {
		t.Fatalf("the generated script does not load: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "events:") || !strings.Contains(string(out), "The server announced list changes while recording") {
		t.Errorf("want merged lists and the foot note, got:\n%s", out)
	}
}

// TestFromTape_Refused: a call whose POST was refused with a bare status
// (mcpspy records it on the request) becomes fault http-NNN, in its place
// among the tool's calls.
func TestFromTape_Refused(t *testing.T) {
	tape := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"a"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"down"}}`,
	)
	tape.Sessions[0].Messages[0].HTTP = &store.HTTPMeta{Method: "POST", Status: 503}
	tape.Sessions[0].Messages[3].HTTP = &store.HTTPMeta{Method: "POST", Status: 502}
	s, out := generated(t, tape)
	if !strings.Contains(string(out), "# Refused with HTTP 502 while recording.") {
		t.Errorf("the script does not say why:\n%s", out)
	}
	c := newClient(t, s)
	call := toolCall("echo", map[string]any{"text": "a"})
	if r, _ := c.ask("tools/call", call); r.HTTPStatus != 503 {
		t.Errorf("first call: %+v, want HTTP status 503\n%s", r, out)
	}
	if got := firstText(t, c.result("tools/call", call)); got != "a" {
		t.Errorf("second call: %q, want the recorded answer", got)
	}
	if r, _ := c.ask("tools/call", toolCall("down", nil)); r.HTTPStatus != 502 {
		t.Errorf("down: %+v, want HTTP status 502", r)
	}
}

// TestFromTape_RefusalHeaders: a refusal's headers a client acts on go
// into the script beside its fault, without those the server owns or
// "[redacted]"; a refusal with a body (which the recorder keeps as a
// frame on the request's stream; mcpspy now marks the request refused
// too, as the 401 here, where the 429 is as it recorded before) is a
// fault with that body and its Content-Type.
func TestFromTape_RefusalHeaders(t *testing.T) {
	tape := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`< slow down`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`< {"error":"invalid_token"}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"a"}]}}`,
	)
	m := tape.Sessions[0].Messages
	m[0].HTTP = &store.HTTPMeta{Method: "POST", Status: 503, StreamID: 1, ResponseHeader: http.Header{
		"Retry-After": {"30"}, "Date": {"Fri, 27 Nov 2026 08:00:00 GMT"}, "Www-Authenticate": {"[redacted]"}}}
	m[1].HTTP = &store.HTTPMeta{Method: "POST", StreamID: 2}
	m[2].HTTP = &store.HTTPMeta{Method: "POST", Status: 429, Stream: store.StreamJSON, StreamID: 2, ResponseHeader: http.Header{
		"Content-Type": {"text/plain"}, "Retry-After": {"60"}, "X-Ratelimit-Remaining": {"0"}}}
	unauthorized := http.Header{"Content-Type": {"application/json"}, "Www-Authenticate": {`Bearer error="invalid_token"`}}
	m[3].HTTP = &store.HTTPMeta{Method: "POST", Status: 401, Stream: store.StreamPostBody, StreamID: 3, ResponseHeader: unauthorized}
	m[4].HTTP = &store.HTTPMeta{Method: "POST", Status: 401, Stream: store.StreamJSON, StreamID: 3, ResponseHeader: unauthorized}
	s, out := generated(t, tape)
	scriptHas(t, out,
		`headers: {Retry-After: "30"}`,
		`headers: {Content-Type: text/plain, Retry-After: "60", X-Ratelimit-Remaining: "0"}`,
		"body: slow down",
		`body: '{"error":"invalid_token"}'`,
	)
	c := newClient(t, s)
	call := toolCall("echo", map[string]any{"text": "a"})
	for _, want := range []replay.Reply{
		{HTTPStatus: 503, Refusal: &replay.HTTPRefusal{Header: http.Header{"Retry-After": {"30"}}}},
		{HTTPStatus: 429, Refusal: &replay.HTTPRefusal{Header: http.Header{"Content-Type": {"text/plain"}, "Retry-After": {"60"}, "X-Ratelimit-Remaining": {"0"}}, Body: []byte("slow down")}},
		{HTTPStatus: 401, Refusal: &replay.HTTPRefusal{Header: unauthorized, Body: []byte(`{"error":"invalid_token"}`)}},
	} {
		r, _ := c.ask("tools/call", call)
		if diff := cmp.Diff(want, r, cmpopts.IgnoreUnexported(replay.RPCError{})); diff != "" {
			t.Errorf("reply (-want +got):\n%s", diff)
		}
	}
	if got := firstText(t, c.result("tools/call", call)); got != "a" {
		t.Errorf("fourth call: %q, want the recorded answer", got)
	}
}

// TestFromTape_ErrorWithStatus: a call answered with its own JSON-RPC
// error and a 4xx status (the recorder keeps that answer as a frame on
// the request's stream, with the status) becomes fault http-NNN with the
// error and the headers a client acts on: the error is the answer, not a
// body to be sent as recorded, with the recording's request id.
func TestFromTape_ErrorWithStatus(t *testing.T) {
	tape := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy"}}`,
		`< {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"needs {{scope}}"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy"}}`,
		`< {"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"needs {{scope}}"}}`,
	)
	m := tape.Sessions[0].Messages
	m[0].HTTP = &store.HTTPMeta{Method: "POST", Stream: store.StreamPostBody, StreamID: 1}
	m[1].HTTP = &store.HTTPMeta{Method: "POST", Status: 403, Stream: store.StreamJSON, StreamID: 1, ResponseHeader: http.Header{
		"Content-Type": {"application/json"}, "Www-Authenticate": {`Bearer error="insufficient_scope"`}, "Date": {"Fri, 27 Nov 2026 08:00:00 GMT"}}}
	m[2].HTTP = &store.HTTPMeta{Method: "POST", Stream: store.StreamPostBody, StreamID: 2}
	m[3].HTTP = &store.HTTPMeta{Method: "POST", Status: 200, Stream: store.StreamJSON, StreamID: 2}
	s, out := generated(t, tape)
	scriptHas(t, out,
		"# Answered with HTTP 403 while recording.",
		"fault: http-403",
		`headers: {Www-Authenticate: Bearer error="insufficient_scope"}`,
	)
	c := newClient(t, s)
	wantErr := &replay.RPCError{Code: -32001, Message: "needs {{scope}}"}
	for i, want := range []replay.Reply{
		{Error: wantErr, HTTPStatus: 403, Refusal: &replay.HTTPRefusal{Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope"`}}}},
		{Error: wantErr},
	} {
		r, _ := c.ask("tools/call", toolCall("deploy", nil))
		if diff := cmp.Diff(want, r, cmpopts.IgnoreUnexported(replay.RPCError{})); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i+1, diff)
		}
	}
}

// scriptHas reports each of wants that the script's text out lacks.
func scriptHas(t *testing.T, out []byte, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script lacks %q:\n%s", want, out)
		}
	}
}

// generated is the script FromTape makes of tape, loaded, and its text.
func generated(t *testing.T, tape *store.Tape) (*Script, []byte) {
	t.Helper()
	out, err := FromTape(tape)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("generated.yaml", out)
	if err != nil {
		t.Fatalf("the generated script does not load: %v\n%s", err, out)
	}
	return s, out
}

// A recorded progress notification without progress (a server's bug) is
// no step a script can hold: the call's progress is left out, and the
// script still loads.
func TestFromTape_ProgressWithoutProgress(t *testing.T) {
	_, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","arguments":{},"_meta":{"progressToken":"t"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","total":2,"message":"starting"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2,"total":2}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"built"}]}}`,
	))
	scriptHas(t, out, "built")
	if strings.Contains(string(out), "progress:") {
		t.Errorf("the script keeps progress that has none:\n%s", out)
	}
}

// A 404 for the session a call named is the session's expiry, in the
// script as in a replay of the recording.
func TestFromTape_SessionGone(t *testing.T) {
	tape := tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
	)
	tape.Sessions[0].Messages[0].HTTP = &store.HTTPMeta{Method: "POST", Status: 404, RequestHeader: http.Header{"Mcp-Session-Id": {"gone"}}}
	s, out := generated(t, tape)
	if !strings.Contains(string(out), "fault: expire-session") {
		t.Errorf("the script does not expire the session:\n%s", out)
	}
	c := newClient(t, s)
	if r, _ := c.ask("tools/call", toolCall("echo", map[string]any{"text": "a"})); !r.ExpireSession {
		t.Errorf("the call: %+v, want the session expired\n%s", r, out)
	}
}

// TestFromTape_OneTextAnswer: calls with different arguments, each
// answered with text that one template over the arguments renders,
// become that one answer, which answers arguments never recorded too.
// Texts no template renders keep an answer per set of arguments.
func TestFromTape_OneTextAnswer(t *testing.T) {
	s, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","n":1}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo {{x}}: hi"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"there","n":2}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Echo {{x}}: there"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"now","arguments":{"zone":"UTC"}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"noon"}]}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"now","arguments":{"zone":"CET"}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"one"}]}}`,
	))
	if !strings.Contains(string(out), `text: 'Echo {{"{{"}}x}}: {{.args.message}}'`) {
		t.Errorf("echo is not one template:\n%s", out)
	}
	c := newClient(t, s)
	for _, tc := range []struct{ tool, arg, value, want string }{
		{"echo", "message", "hi", "Echo {{x}}: hi"},
		{"echo", "message", "never recorded", "Echo {{x}}: never recorded"},
		{"now", "zone", "CET", "one"},
		{"now", "zone", "PST", `mcpmock script: no answer of tool "now" matches the arguments {"zone":"PST"}; nearest: the answer at line 21: arguments.zone is "PST", want "UTC"`},
	} {
		if got := firstText(t, c.result("tools/call", toolCall(tc.tool, map[string]any{tc.arg: tc.value}))); got != tc.want {
			t.Errorf("%s %s=%q: %q, want %q", tc.tool, tc.arg, tc.value, got, tc.want)
		}
	}
}
