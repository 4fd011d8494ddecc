package script

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestLoad_BadFault: a fault http-NNN must name a 4xx or 5xx status;
// mcpmock check names the line and the field of one that does not.
func TestLoad_BadFault(t *testing.T) {
	tests := []struct {
		name, fault string
		want        string // "" for a fault the loader takes
	}{
		{"503", "http-503", ""},
		{"401", "http-401", ""},
		{"expire-session", "expire-session", ""},
		{"not an error", "http-200", `test.yaml:3:23: tools[0].answers[0].fault: fault "http-200": 200 is not an error status: want 4xx or 5xx (400-599)`},
		{"not a number", "http-abc", `test.yaml:3:23: tools[0].answers[0].fault: fault "http-abc": want http- and a three-digit status, such as http-503`},
		{"past 599", "http-600", `test.yaml:3:23: tools[0].answers[0].fault: fault "http-600": 600 is not an error status`},
		{"four digits", "http-5030", `fault "http-5030": want http- and a three-digit status`},
		{"signed", "http-+50", `fault "http-+50": want http- and a three-digit status`},
		{"no status", "http-", `fault "http-": want http- and a three-digit status`},
		{"unknown", "expire", `tools[0].answers[0].fault: unknown fault "expire" (known: hang, close, malformed, duplicate, wrong-id, expire-session, http-NNN)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkAnswer(t, "{fault: "+tt.fault+"}")
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant an error containing %s", err, tt.want)
			}
		})
	}
	// A fault that answers with a status sends no JSON-RPC answer.
	path := filepath.Join(t.TempDir(), "test.yaml")
	if err := os.WriteFile(path, []byte("tools:\n  - name: a\n    answers: [{fault: http-503, text: x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err == nil || !strings.Contains(err.Error(), `tools[0].answers[0].fault: fault "http-503" sends no answer`) {
		t.Errorf("got %v, want the answer's text refused", err)
	}
}

// TestLoad_FaultHeaders: a status fault's headers must be headers a
// server may send and mcpmock does not own; mcpmock check names the file,
// the line and the header of one that is not.
func TestLoad_FaultHeaders(t *testing.T) {
	tests := []struct {
		name, answer string
		want         string // "" for headers the loader takes
	}{
		{"Retry-After as a number", "{fault: http-503, headers: {Retry-After: 30}}", ""},
		{"several challenges", "{fault: http-401, headers: {WWW-Authenticate: [Basic, 'Bearer realm=\"a\"']}}", ""},
		{"with expire-session", "{fault: expire-session, headers: {X-Reason: idle}}", ""},
		{"a space in the name", "{fault: http-503, headers: {Retry After: 30}}",
			`test.yaml:3:43: tools[0].answers[0].headers.Retry After: "Retry After" is not a header name`},
		{"owned", "{fault: http-503, headers: {Content-Length: 0}}",
			`test.yaml:3:43: tools[0].answers[0].headers.Content-Length: Content-Length is set by mcpmock, not by a fault`},
		{"the session's", "{fault: http-503, headers: {mcp-session-id: x}}",
			`tools[0].answers[0].headers.mcp-session-id: Mcp-Session-Id is set by mcpmock`},
		{"Content-Type without a body", "{fault: http-503, headers: {Content-Type: application/json}}",
			`tools[0].answers[0].headers.Content-Type: Content-Type goes with a body`},
		{"a body of text", "{fault: http-503, body: busy}", ""},
		{"a JSON body with its type", "{fault: http-401, headers: {Content-Type: application/problem+json}, body: {title: expired}}", ""},
		{"a body without a status fault", "{text: hi, body: busy}",
			`test.yaml:3:32: tools[0].answers[0].body: body goes with fault http-NNN or expire-session`},
		{"twice", "{fault: http-503, headers: {Retry-After: 1, retry-after: 2}}",
			`tools[0].answers[0].headers.retry-after: header Retry-After given twice (first at line 3)`},
		{"a mapping as value", "{fault: http-503, headers: {Retry-After: {s: 1}}}",
			`tools[0].answers[0].headers.Retry-After: want a header value (text or a number) or a list of them, got a mapping`},
		{"not a mapping", "{fault: http-503, headers: [Retry-After]}",
			`tools[0].answers[0].headers: want a mapping of header names to values, got a list`},
		{"an error with its status", "{fault: http-403, headers: {WWW-Authenticate: Bearer}, error: {code: -32001, message: no}}", ""},
		{"an error and a body", "{fault: http-403, error: {code: -32001, message: no}, body: denied}",
			`tools[0].answers[0].body: fault "http-403" with an error sends the error as its body (application/json); remove body, or error`},
		{"an error and its Content-Type", "{fault: http-403, headers: {Content-Type: text/plain}, error: {code: -32001, message: no}}",
			`tools[0].answers[0].headers.Content-Type: Content-Type goes with a body`},
		{"an error with expire-session", "{fault: expire-session, error: {code: -32001, message: no}}",
			`tools[0].answers[0].fault: fault "expire-session" sends no answer; remove the result or error`},
		{"an error and a result", "{fault: http-403, text: hi, error: {code: -32001, message: no}}",
			`tools[0].answers[0].error: a JSON-RPC error cannot also carry a result`},
		{"without a status fault", "{text: hi, headers: {Retry-After: 1}}",
			`tools[0].answers[0].headers: headers go with fault http-NNN or expire-session`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkAnswer(t, tt.answer)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v\nwant an error containing %s", err, tt.want)
			}
		})
	}
}

// checkAnswer checks test.yaml, a script whose one tool, a, has the one
// answer given (YAML flow style), on line 3 from column 15.
func checkAnswer(t *testing.T, answer string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.yaml")
	if err := os.WriteFile(path, []byte("tools:\n  - name: a\n    answers: ["+answer+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Check(path)
}

func TestLoad_Examples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(peertest.ModuleRoot(), "cassettes", "script-*"))
	if err != nil || len(files) < 8 {
		t.Fatalf("example scripts: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := Check(f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLoad_BadInput: every refusal names file:line:col and the field path.
func TestLoad_BadInput(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string // substrings of the error, in order
	}{
		{"unknown field", `
server: {name: s, version: "1"}
tools:
  - name: a
    answers: [{txt: hi}]
`, []string{"test.yaml:4:16: tools[0].answers[0].txt: unknown field \"txt\""}},
		{"unknown top-level field", `
servr: {name: s}
`, []string{"test.yaml:1:1: servr: unknown field \"servr\"", `; did you mean "server"?`}},
		{"a field near a known one", `
server: {name: s, version: "1"}
tools:
  - name: a
    answer: [{text: hi}]
`, []string{"test.yaml:4:5: tools[0].answer: unknown field \"answer\"", `; did you mean "answers"?`}},
		{"wrong type", `
server: {name: s, version: 1.0}
`, []string{"test.yaml:1:28: server.version: want a string, got a number"}},
		{"server without name and version", `
server: {title: s}
`, []string{"test.yaml:1:9: server: name is required", "test.yaml:1:9: server: version is required"}},
		{"wrong type in list", `
server: {name: s, version: "1", pageSize: two}
`, []string{"test.yaml:1:43: server.pageSize: want an integer, got a string"}},
		{"x-mcp-header on a number", `
tools:
  - name: a
    inputSchema:
      type: object
      properties:
        region: {type: string, x-mcp-header: Region}
        n: {type: number, x-mcp-header: N}
    answers: [{text: hi}]
`, []string{"test.yaml:7:41: tools[0].inputSchema.properties.n.x-mcp-header: property n: x-mcp-header \"N\" on type number"}},
		{"x-mcp-header names repeated", `
tools:
  - name: a
    inputSchema:
      type: object
      properties:
        a: {type: string, x-mcp-header: Region}
        o:
          type: object
          properties:
            b: {type: string, x-mcp-header: region}
    answers: [{text: hi}]
`, []string{"test.yaml:10:45: tools[0].inputSchema.properties.o.properties.b.x-mcp-header: property o.b: x-mcp-header \"region\" repeats"}},
		{"x-mcp-header under items", `
tools:
  - name: a
    inputSchema:
      type: object
      properties:
        l: {type: array, items: {type: string, x-mcp-header: L}}
    answers: [{text: hi}]
`, []string{"test.yaml:6:62: tools[0].inputSchema.properties.l.items.x-mcp-header: property l: x-mcp-header is allowed only"}},
		{"x-mcp-header not a token, in an added tool", `
tools:
  - {name: a, answers: [{text: hi}]}
events:
  - after: {requests: 1}
    addTools:
      - name: b
        inputSchema: {type: object, properties: {x: {type: string, x-mcp-header: "a b"}}}
        answers: [{text: hi}]
`, []string{"test.yaml:7:82: events[0].addTools[0].inputSchema.properties.x.x-mcp-header: property x: x-mcp-header \"a b\" is not an HTTP token"}},
		{"schema does not compile", `
tools:
  - name: a
    inputSchema: {type: object, properties: {x: {type: 5}}}
    answers: [{text: hi}]
`, []string{"test.yaml:3:18: tools[0].inputSchema: schema does not compile"}},
		{"schema with an unknown type", `
tools:
  - name: a
    inputSchema:
      type: object
      properties:
        x: {type: strng}
        y: {type: [string, nope]}
        type: {type: string}
        z: {type: string, default: {type: data, not a schema}}
    answers: [{text: hi}]
`, []string{`test.yaml:6:19: tools[0].inputSchema.properties.x.type: unknown schema type "strng" (want array, boolean, integer, null, number, object, string); did you mean string?`,
			`test.yaml:7:28: tools[0].inputSchema.properties.y.type: unknown schema type "nope"`}},
		{"resource uri without a scheme", `
resources:
  - {uri: readme.txt, name: readme, text: hi}
`, []string{`test.yaml:2:11: resources[0].uri: uri "readme.txt" is not an absolute URI: give it a scheme (file:///readme.txt`}},
		{"a key given twice", `
tools:
  - name: a
    name: b
    answers: [{text: x, structuredContent: {n: 1, n: 2}, fault: http-503, headers: {Retry-After: 1, Retry-After: 2}}]
`, []string{`test.yaml:3:5: tools[0].name: "name" is given twice in one mapping (first at line 2)`,
			`test.yaml:4:51: tools[0].answers[0].structuredContent.n: "n" is given twice in one mapping (first at line 4)`,
			`tools[0].answers[0].headers.Retry-After: "Retry-After" is given twice`}},
		{"answers after the default", `
tools:
  - name: a
    answers:
      - text: default
      - {when: {exact: {x: 1}}, text: one}
      - {when: {exact: {x: 2}}, text: two}
prompts:
  - name: p
    answers: [{messages: [{role: user, text: x}]}, {when: {exact: {t: y}}, messages: [{role: user, text: y}]}]
`, []string{`test.yaml:5:9: tools[0].answers[1]: never chosen: the answer at line 4 has no when, so it answers first; put the default last`,
			`test.yaml:9:52: prompts[0].answers[1]: never chosen: the answer at line 9 has no when`}},
		{"durations out of range or of unknown units", `
tools:
  - name: a
    answers:
      - {when: {exact: {a: 1}}, text: x, delay: -5s}
      - {when: {exact: {a: 2}}, text: x, delay: 9999999999h}
      - {text: x, delay: 5y}
`, []string{`test.yaml:4:49: tools[0].answers[0].delay: a duration cannot be negative, got "-5s"`,
			`tools[0].answers[1].delay: duration "9999999999h" is too long`,
			`tools[0].answers[2].delay: want a duration such as "250ms" or "2s", got "5y": unknown unit "y"`}},
		{"logging answers under capabilities without logging", `
server: {name: s, version: "1", capabilities: {tools: {}}}
tools:
  - name: a
    answers: [{text: x, log: [{level: info, data: hi}]}]
`, []string{`test.yaml:1:47: server.capabilities: an answer logs (log:), but these capabilities declare no logging: add logging: {}`}},
		{"schema with a bad $ref", `
tools:
  - name: a
    inputSchema: {type: object, properties: {x: {$ref: "#/nope"}}}
    answers: [{text: hi}]
`, []string{"tools[0].inputSchema: schema does not compile"}},
		{"duplicate tool name", `
tools:
  - name: a
    answers: [{text: hi}]
  - name: a
    answers: [{text: hi}]
`, []string{"test.yaml:4:5: tools[1]: duplicate tool name \"a\" (first at line 2)"}},
		{"template does not parse", `
tools:
  - name: a
    answers: [{text: "hi {{.args.name"}]
`, []string{"test.yaml:3:22: tools[0].answers[0].text: template does not parse: line 1: unclosed action"}},
		{"structuredContent against outputSchema", `
tools:
  - name: a
    outputSchema: {type: object, properties: {n: {type: integer}}, required: [n]}
    answers: [{structuredContent: {n: "x"}}]
`, []string{"tools[0].answers[0].structuredContent: structuredContent does not match the tool's outputSchema"}},
		{"several type errors at once", `
server: {name: s, version: 2}
tools:
  - name: a
    answers: [{text: x, delay: soon}]
`, []string{"test.yaml:1:28: server.version: want a string", "test.yaml:4:32: tools[0].answers[0].delay: want a duration"}},
		{"several problems at once", `
server: {name: s, version: "1", protocolVersions: ["1999-01-01"], invalidArguments: maybe}
tools:
  - name: "bad name"
    answers: [{fault: explode}]
`, []string{"test.yaml:1:51: server.protocolVersions[0]: unknown protocol version", "test.yaml:1:85: server.invalidArguments: want \"isError\" or \"error\"", "test.yaml:3:11: tools[0].name: tool name \"bad name\" must be", "test.yaml:4:23: tools[0].answers[0].fault: unknown fault \"explode\""}},
		{"bad regex", `
tools:
  - name: a
    answers: [{when: {regex: {q: "(["}}, text: x}]
`, []string{"tools[0].answers[0].when.regex.q: regex does not compile"}},
		{"event on an unknown tool", `
tools:
  - name: a
    answers: [{text: x}]
events:
  - after: {tool: b, calls: 1}
    removeTools: [c]
`, []string{"events[0].after.tool: no tool \"b\" in the script\n", "events[0].removeTools[0]: no tool \"c\" to remove"}},
		{"event on a tool near one", `
tools:
  - name: status
    answers: [{text: x}]
events:
  - after: {tool: stauts, calls: 1}
    replaceTools: [{name: Status, answers: [{text: y}]}]
    removeTools: [statu]
`, []string{`events[0].after.tool: no tool "stauts" in the script; did you mean "status"?`, `no tool "Status" to replace; did you mean "status"?`, `events[0].removeTools[0]: no tool "statu" to remove; did you mean "status"?`}},
		{"event removes a resource or prompt the script never lists", `
tools:
  - {name: a, answers: [{text: x}]}
resources:
  - {uri: "file:///readme.txt", name: readme, text: hi}
prompts:
  - {name: summarize, messages: [{role: user, text: s}]}
events:
  - after: {tool: a, calls: 1}
    addResources: [{uri: "file:///late.txt", name: late, text: late}]
    addPrompts: [{name: late, messages: [{role: user, text: l}]}]
  - after: {tool: a, calls: 2}
    removeResources: ["file:///readme.txt", "file:///readme.text", "https://example.com/"]
    removePrompts: [late, summarise, nothing]
`, []string{
			`test.yaml:12:22: events[1].removeResources[1]: no resource "file:///readme.text" to remove; did you mean "file:///readme.txt"?`,
			`test.yaml:12:22: events[1].removeResources[2]: no resource "https://example.com/" to remove` + "\n",
			`test.yaml:13:20: events[1].removePrompts[1]: no prompt "summarise" to remove; did you mean "summarize"?`,
			`test.yaml:13:20: events[1].removePrompts[2]: no prompt "nothing" to remove`,
		}},
		{"resource and prompt added twice in one event", `
tools:
  - {name: a, answers: [{text: x}]}
events:
  - after: {tool: a, calls: 1}
    addResources: [{uri: "file:///r", name: r, text: "1"}, {uri: "file:///r", name: r, text: "2"}]
    addPrompts:
      - {name: p, messages: [{role: user, text: "1"}]}
      - {name: p, messages: [{role: user, text: "2"}]}
`, []string{`test.yaml:5:60: events[0].addResources[1]: duplicate resource uri "file:///r" in this event`, `test.yaml:8:9: events[0].addPrompts[1]: duplicate prompt name "p" in this event`}},
		{"not YAML", "tools: [a, b\n", []string{"test.yaml:", "not valid YAML or JSON"}},
		{"alias cycle", "tools: &a [{name: x, answers: [{content: [*a]}]}]\n", []string{"nested more than 100 levels deep"}},
		{"billion laughs", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\nserver: {capabilities: {x: *f}}\n", []string{"too large"}},
		{"empty", "", []string{"test.yaml:1:1: (top level): the script is empty"}},
		{"bad JSON", `{"tools": [{"name": "a", "answers": [{"text": 5}]}]}`, []string{"test.yaml:1:47: tools[0].answers[0].text: want a string, got a number"}},
		{"error and result together", `
tools:
  - name: a
    answers: [{text: x, error: {code: 1, message: m}}]
`, []string{"tools[0].answers[0].error: a JSON-RPC error cannot also carry a result"}},
		{"no answers", `
tools:
  - name: a
`, []string{"tools[0]: tool \"a\" has no answers"}},
		{"outputSchema needs structuredContent", `
tools:
  - name: a
    outputSchema: {type: object}
    answers: [{text: x}]
`, []string{"tools[0].answers[0]: the tool declares an outputSchema"}},
		{"elicit without a message or a form", `
tools:
  - name: a
    elicit: {}
    answers: [{text: x}]
`, []string{"test.yaml:3:13: tools[0].elicit: elicit needs a message", "tools[0].elicit: elicit needs a requestedSchema"}},
		{"elicit asking for a nested object", `
tools:
  - name: a
    elicit:
      message: m
      requestedSchema: {type: object, properties: {ok: {type: boolean}, address: {type: object}, tags: {type: array, items: {type: integer}}}}
    answers: [{text: x}]
`, []string{"tools[0].elicit.requestedSchema.properties.address: type object: a form asks only for strings", "tools[0].elicit.requestedSchema.properties.tags: an array property must be of strings"}},
		{"elicit form requiring a field it does not define", `
tools:
  - name: a
    elicit: {message: m, requestedSchema: {type: object, properties: {a: {type: string}}, required: [a, b]}}
    answers: [{text: hi}]
prompts:
  - name: p
    elicit:
      message: m
      requestedSchema:
        type: object
        required:
          - x
    messages: [{role: user, text: hi}]
`, []string{`test.yaml:3:105: tools[0].elicit.requestedSchema.required[1]: required names "b", which the form does not define (fields: a)`,
			`test.yaml:12:13: prompts[0].elicit.requestedSchema.required[0]: required names "x", which the form does not define (fields: none)`}},
		{"elicit form not an object", `
tools:
  - name: a
    elicit: {message: m, requestedSchema: {type: string}}
    answers: [{text: x}]
`, []string{"tools[0].elicit.requestedSchema: requestedSchema must have type: object"}},
		{"when.elicited on a tool that asks nothing", `
tools:
  - name: a
    answers: [{when: {elicited: {action: accept}}, text: x}]
`, []string{"tools[0].answers[0].when.elicited: when.elicited matches the client's answer to the tool's elicit, and this tool has none"}},
		{"elicit modes mixed up", `
tools:
  - {name: a, elicit: {mode: url, message: m}, answers: [{text: x}]}
  - {name: b, elicit: {mode: url, message: m, url: "https://x", requestedSchema: {type: object}}, answers: [{text: x}]}
  - {name: c, elicit: {message: m, url: "https://x", requestedSchema: {type: object}}, answers: [{text: x}]}
  - {name: d, elicit: {mode: popup, message: m}, answers: [{text: x}]}
  - {name: e, elicit: {message: m, complete: true, requestedSchema: {type: object}}, answers: [{text: x}]}
`, []string{
			"tools[4].elicit.complete: complete is for mode: url",
			"tools[0].elicit: elicit in mode url needs a url",
			"tools[1].elicit.requestedSchema: mode url asks for no fields",
			"tools[2].elicit.url: url is for mode: url",
			`tools[3].elicit.mode: mode must be form or url, got "popup"`,
		}},
		{"sample without messages or maxTokens", `
tools:
  - name: a
    sample: {}
    answers: [{text: x}]
`, []string{"test.yaml:3:13: tools[0].sample: sample needs messages", "tools[0].sample: sample needs maxTokens, a positive number"}},
		{"sample with bad fields", `
tools:
  - name: a
    sample:
      messages: [{role: system, text: hi}, {role: user}]
      maxTokens: 10
      temperature: warm
      includeContext: everything
      systemPrompt: "{{.args"
    answers: [{text: x}]
`, []string{
			"tools[0].sample.messages[0].role: role must be user or assistant, got \"system\"",
			"tools[0].sample.messages[1]: a sample message needs text or content",
			"tools[0].sample.temperature: want a number",
			"tools[0].sample.includeContext: includeContext must be none, thisServer or allServers, got \"everything\"",
			"tools[0].sample.systemPrompt: template does not parse",
		}},
		{"a prompt's bad asks and answers", `
prompts:
  - name: p
    elicit: {message: m}
    sample: {messages: [{role: system, text: x}]}
    messages: [{role: user, text: x}]
    answers:
      - when: {sampled: {model: x}}
        messages: [{role: user, text: "{{.elicited"}]
      - {error: {code: 1, message: m}, messages: [{role: user, text: x}]}
      - when: {}
  - name: q
    answers: [{when: {elicited: {action: accept}}, error: {code: 0, message: m}}]
`, []string{
			"test.yaml:3:13: prompts[0].elicit: elicit needs a requestedSchema",
			"test.yaml:4:32: prompts[0].sample.messages[0].role: role must be user or assistant",
			"test.yaml:4:13: prompts[0].sample: sample needs maxTokens",
			"test.yaml:7:7: prompts[0].answers: give messages or answers, not both",
			"test.yaml:8:39: prompts[0].answers[0].messages[0].text: template does not parse",
			"test.yaml:9:17: prompts[0].answers[1].error: a JSON-RPC error cannot also carry messages",
			"test.yaml:10:15: prompts[0].answers[2].when: when needs exact, subset, regex, elicited or sampled",
			"test.yaml:10:9: prompts[0].answers[2]: an answer of a prompt needs messages or error",
			"test.yaml:12:33: prompts[1].answers[0].when.elicited: when.elicited matches the client's answer to the prompt's elicit, and this prompt has none",
			"test.yaml:12:66: prompts[1].answers[0].error.code: a JSON-RPC error needs a non-zero code",
		}},
		{"a resource's bad asks and answers", `
resources:
  - uri: "file:///a"
    name: a
    text: fixed
    elicit: {mode: url, message: m}
    roots: true
    answers:
      - when: {exact: {x: 1}, sampled: {model: m}}
        text: x
      - {text: x, blob: "not base64!"}
      - {}
`, []string{
			"test.yaml:5:13: resources[0].elicit: elicit in mode url needs a url",
			"test.yaml:8:7: resources[0].answers: give text or blob, or answers, not both",
			"test.yaml:8:15: resources[0].answers[0].when: a resource is read without arguments: when takes elicited or sampled",
			"test.yaml:8:40: resources[0].answers[0].when.sampled: when.sampled matches the model's answer to the resource's sample, and this resource has none",
			"test.yaml:10:9: resources[0].answers[1]: give one of text, blob or error",
			"test.yaml:10:25: resources[0].answers[1].blob: blob is not base64",
			"test.yaml:11:9: resources[0].answers[2]: an answer of a resource needs text, blob or error",
		}},
		{"when.sampled on a tool that samples nothing", `
tools:
  - name: a
    elicit: {message: m, requestedSchema: {type: object}}
    answers: [{when: {sampled: {model: x}}, text: x}]
`, []string{"tools[0].answers[0].when.sampled: when.sampled matches the model's answer to the tool's sample, and this tool has none"}},
		{"roots not a boolean", `
tools:
  - name: a
    roots: yes please
    answers: [{text: x}]
`, []string{"tools[0].roots"}},
		{"decreasing progress", `
tools:
  - name: a
    answers: [{text: x, progress: [{progress: 2}, {progress: 1}]}]
`, []string{"tools[0].answers[0].progress[1].progress: progress must increase"}},
		// Read as left out, each changed what the script means, silently:
		// an override, a default answer, an empty result.
		{"an empty server", `
server:
tools:
  - {name: a, answers: [{text: x}]}
`, []string{"test.yaml:1:8: server: want a mapping, got nothing: write what server holds, or leave server out"}},
		{"an empty when and error", `
tools:
  - name: a
    answers:
      - when:
        error:
        text: x
`, []string{"test.yaml:4:14: tools[0].answers[0].when: want a mapping, got nothing: write what when holds, or leave when out",
			"test.yaml:5:15: tools[0].answers[0].error: want a mapping, got nothing: write what error holds, or leave error out"}},
		// It was named at 0:0, "(top level)".
		{"an event without after", `
tools:
  - {name: a, answers: [{text: x}]}
events:
  - {addTools: [{name: b, answers: [{text: y}]}]}
`, []string{"test.yaml:4:5: events[0].after: after needs requests: N (N ≥ 1), or tool: NAME with calls: N (N ≥ 1)"}},
		// Without it the step went out as progress 0, unseen.
		{"a progress step without progress", `
tools:
  - name: a
    answers: [{text: x, progress: [{total: 3, message: starting}, {progress: 2, total: 3}]}]
`, []string{"test.yaml:3:36: tools[0].answers[0].progress[0]: a progress step needs progress: N, a number that increases from step to step"}},
		{"resource template events", `
resourceTemplates:
  - {uriTemplate: "logs:///{day}", name: logs}
tools:
  - {name: a, answers: [{text: x}]}
events:
  - after: {tool: a, calls: 1}
    removeResourceTemplates: ["logs:///{dy}"]
    addResourceTemplates:
      - {uriTemplate: "b:///{x}", name: b}
      - {uriTemplate: "b:///{x}", name: b2}
`, []string{`test.yaml:7:30: events[0].removeResourceTemplates[0]: no resource template "logs:///{dy}" to remove; did you mean "logs:///{day}"?`,
			`test.yaml:10:9: events[0].addResourceTemplates[1]: duplicate resource template "b:///{x}" in this event`}},
		// Each answered {"content":[]} without a word.
		{"an answer that says nothing", `
tools:
  - name: a
    answers: [{}]
  - name: b
    answers:
      - when: {exact: {city: Oslo}}
      - text: elsewhere
`, []string{"test.yaml:3:15: tools[0].answers[0]: this answer says nothing: give text, content, structuredContent, isError or error (content: [] for an empty result)",
			"test.yaml:6:9: tools[1].answers[0]: this answer says nothing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(strings.TrimPrefix(tt.script, "\n")))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", msg, w)
				}
			}
		})
	}
}

// An empty result written out is no slip: content: [], or text: "" as
// export --script writes a recorded result that had no content.
func TestLoad_EmptyResultWrittenOut(t *testing.T) {
	for _, answer := range []string{`{content: []}`, `{text: ""}`, `{when: {exact: {city: Oslo}}, content: []}`} {
		if _, err := Parse("test.yaml", []byte("tools:\n  - name: a\n    answers: ["+answer+"]\n")); err != nil {
			t.Errorf("%s refused: %v", answer, err)
		}
	}
}

func TestCheck_File(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(path, []byte("tools:\n  - name: a\n    answers: [{text: x}]\n  - name: a\n    answers: [{text: y}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Check(path)
	if err == nil || !strings.Contains(err.Error(), path+":4:5: tools[1]: duplicate tool name") {
		t.Fatalf("Check: %v", err)
	}
	if src, err := Load(path); err == nil || src != nil {
		t.Fatalf("Load served a bad script: %v %v", src, err)
	}
	if err := Check(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

// A .json script must be JSON, though the YAML reader would take more
// (a trailing comma, a comment): other tools read the file too. The error
// says where; the same text in a .yaml file loads.
func TestCheck_JSONFileIsJSON(t *testing.T) {
	dir := t.TempDir()
	text := "{\"server\": {\"name\": \"s\", \"version\": \"1\"},\n \"tools\": [{\"name\": \"a\", \"answers\": [{\"text\": \"x\"},]}]}\n"
	for _, tc := range []struct{ file, want string }{
		{"trailing.json", "trailing.json:2:52: (top level): not valid JSON: invalid character ']' looking for beginning of value; a trailing comma before it, which JSON does not allow (YAML does: name the file .yaml to keep it)"},
		{"trailing.yaml", ""},
		{"object.json", "object.json:2:51: (top level): not valid JSON: invalid character '}' looking for beginning of object key string; a trailing comma before it, which JSON does not allow (YAML does: name the file .yaml to keep it)"},
		{"comment.json", "comment.json:2:2: (top level): not valid JSON: invalid character '/' looking for beginning of object key string; JSON has no comments (YAML does, with #: name the file .yaml to keep them)"},
		{"other.json", "other.json:2:2: (top level): not valid JSON: invalid character 'x' looking for beginning of object key string"},
	} {
		text := text
		switch tc.file {
		case "object.json":
			text = "{\"server\": {\"name\": \"s\", \"version\": \"1\"},\n \"tools\": [{\"name\": \"a\", \"answers\": [{\"text\": \"x\",}]}]}\n"
		case "comment.json":
			text = "{\"server\": {\"name\": \"s\", \"version\": \"1\"},\n // the tools\n \"tools\": []}\n"
		case "other.json":
			text = "{\"server\": {\"name\": \"s\", \"version\": \"1\"},\n x}\n"
		}
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		err := Check(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.file, err)
		case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want …%s", tc.file, err, tc.want)
		}
	}
}

// Errors are listed in the order of the file, as a compiler lists them,
// though the compiler checks tools before prompts.
func TestLoad_ErrorsInFileOrder(t *testing.T) {
	_, err := Parse("order.yaml", []byte(`server: {name: s, version: "1"}
prompts:
  - name: p
    messages: [{role: robot, text: hi}]
tools:
  - name: t
    answers: [{text: "{{.args"}]
`))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("got %v, want two errors", err)
	}
	if es[0].Line != 4 || es[1].Line != 7 {
		t.Errorf("errors at lines %d, %d; want 4, 7:\n%v", es[0].Line, es[1].Line, err)
	}
}

// Only schemas are checked for unknown type names: a type member inside
// const, enum, default or examples is data, and a property named type is
// a property.
func TestLoad_SchemaTypeInDataIsData(t *testing.T) {
	_, err := Parse("test.yaml", []byte(`
tools:
  - name: a
    inputSchema:
      type: object
      properties:
        type: {type: string, enum: [{type: x}], default: {type: y}, examples: [{type: z}]}
        kind: {const: {type: w}}
    answers: [{text: hi}]
`))
	if err != nil {
		t.Errorf("a schema whose data holds type members: %v", err)
	}
}

// An event may remove a tool, resource or prompt that another event adds,
// one written after it included: events fire as their triggers come, not
// in the order written (here the second fires first).
func TestLoad_EventRemovesWhatALaterEventAdds(t *testing.T) {
	_, err := Parse("test.yaml", []byte(`
tools:
  - {name: a, answers: [{text: x}]}
events:
  - after: {tool: a, calls: 2}
    removeTools: [t]
    removeResources: ["file:///r"]
    removePrompts: [p]
  - after: {tool: a, calls: 1}
    addTools: [{name: t, answers: [{text: t}]}]
    addResources: [{uri: "file:///r", name: r, text: r}]
    addPrompts: [{name: p, messages: [{role: user, text: p}]}]
`))
	if err != nil {
		t.Errorf("removals of what the second event adds: %v", err)
	}
}
