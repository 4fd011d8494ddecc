package script

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestComplete_Answers: completion/complete against script-complete.yaml,
// in both eras: values by prefix (case-sensitive, in script order),
// explicit answers by the value typed and the context, errors for what
// the script does not have.
func TestComplete_Answers(t *testing.T) {
	prompt := func(arg, value string, context map[string]any) map[string]any {
		p := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "translate"}, "argument": map[string]any{"name": arg, "value": value}}
		if context != nil {
			p["context"] = map[string]any{"arguments": context}
		}
		return p
	}
	logs := func(arg, value string) map[string]any {
		return map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "file:///logs/{service}/{date}.log"}, "argument": map[string]any{"name": arg, "value": value}}
	}
	tests := []struct {
		name   string
		params map[string]any
		want   string // the result's completion, or the error
	}{
		{"by prefix", prompt("language", "G", nil), `{"total":3,"values":["German","Greek","Gujarati"]}`},
		{"case-sensitive", prompt("language", "g", nil), `{"total":0,"values":[]}`},
		{"nothing typed: all", prompt("language", "", nil), `{"total":5,"values":["English","French","German","Greek","Gujarati"]}`},
		{"an explicit answer, as written", prompt("language", "?", nil), `{"hasMore":true,"total":7000,"values":["English","French"]}`},
		{"by the context", prompt("dialect", "", map[string]any{"language": "French"}), `{"total":3,"values":["Belgian","Canadian","Swiss"]}`},
		{"the context, and no answer matches: the values", prompt("dialect", "st", map[string]any{"language": "German"}), `{"total":1,"values":["standard"]}`},
		{"an argument without complete", prompt("text", "hel", nil), `{"total":0,"values":[]}`},
		{"a template variable", logs("service", "a"), `{"total":2,"values":["api","auth"]}`},
		{"an explicit error", logs("date", "1999"), `error -32602 no logs before 2000 (1999)`},
		{"unknown prompt", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "translat"}, "argument": map[string]any{"name": "language", "value": ""}},
			`error -32602 completion/complete: unknown prompt "translat"`},
		{"unknown argument", prompt("languag", "", nil), `error -32602 completion/complete: prompt "translate" has no argument "languag" (it has: language, dialect, text)`},
		{"unknown template", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "file:///logs/{x}"}, "argument": map[string]any{"name": "x", "value": ""}},
			`error -32602 completion/complete: unknown resource template "file:///logs/{x}"`},
		{"unknown variable", logs("level", ""), `error -32602 completion/complete: resource template "file:///logs/{service}/{date}.log" has no argument "level" (it has: service, date)`},
		{"unknown ref type", map[string]any{"ref": map[string]any{"type": "ref/tool", "name": "x"}, "argument": map[string]any{"name": "x", "value": ""}},
			`error -32602 completion/complete: unknown ref type "ref/tool": want ref/prompt or ref/resource`},
		{"no argument", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "translate"}},
			`error -32602 completion/complete: params.argument must be {name, value}, both strings`},
	}
	s := mustLoad(t, "script-complete.yaml")
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		for _, tt := range tests {
			t.Run(era+"/"+tt.name, func(t *testing.T) {
				c := newClient(t, s)
				params := map[string]any{}
				for k, v := range tt.params {
					params[k] = v
				}
				if era == statelessVersion {
					params["_meta"] = map[string]any{metaVersion: era}
				} else {
					c.result("initialize", map[string]any{"protocolVersion": era})
				}
				r, ok := c.ask("completion/complete", params)
				if !ok {
					t.Fatal("not answered")
				}
				var got string
				if r.Error != nil {
					got = fmt.Sprintf("error %d %s", r.Error.Code, r.Error.Message)
				} else {
					var res struct {
						Completion json.RawMessage `json:"completion"`
						ResultType string          `json:"resultType"`
					}
					if err := json.Unmarshal(r.Result, &res); err != nil {
						t.Fatal(err)
					}
					got = string(res.Completion)
					if want := map[bool]string{true: "complete", false: ""}[era == statelessVersion]; res.ResultType != want {
						t.Errorf("resultType %q, want %q", res.ResultType, want)
					}
				}
				if got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			})
		}
	}
}

// TestComplete_HasMoreWithoutTotal: an answer that says it has more but
// not how many sends no total, which would say there are no more.
func TestComplete_HasMoreWithoutTotal(t *testing.T) {
	s, err := Parse("more.yaml", []byte("server: {name: s, version: \"1\"}\nprompts:\n  - name: p\n    arguments: [{name: a, complete: {answers: [{values: [x], hasMore: true}]}}]\n    messages: [{role: user, text: x}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := newClient(t, s).result("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": ""}})
	if got, _ := json.Marshal(res["completion"]); string(got) != `{"hasMore":true,"values":["x"]}` {
		t.Errorf("got %s", got)
	}
}

// TestComplete_Capacity: a list of more than 100 matches sends the first
// 100, with the total and hasMore; the spec caps a completion at 100.
func TestComplete_Capacity(t *testing.T) {
	var values []string
	for i := range 150 {
		values = append(values, fmt.Sprintf("v%03d", i))
	}
	list, _ := json.Marshal(values)
	s, err := Parse("cap.yaml", []byte("server: {name: s, version: \"1\"}\nprompts:\n  - name: p\n    arguments: [{name: a, complete: {values: "+string(list)+"}}]\n    messages: [{role: user, text: x}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		typed   string
		n       int
		total   float64
		hasMore bool
	}{{"v", 100, 150, true}, {"v1", 50, 50, false}, {"v14", 10, 10, false}} {
		res := newClient(t, s).result("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": tt.typed}})
		got := res["completion"].(map[string]any)
		vs, _ := got["values"].([]any)
		hasMore, _ := got["hasMore"].(bool)
		if len(vs) != tt.n || got["total"] != tt.total || hasMore != tt.hasMore {
			t.Errorf("%q: got %d values, total %v, hasMore %v; want %d, %v, %v", tt.typed, len(vs), got["total"], hasMore, tt.n, tt.total, tt.hasMore)
		}
	}
}

// TestComplete_Capabilities: completions is declared when something
// completes, and completion/complete is otherwise what it was before
// scripts completed: -32601, as from a server without the capability.
func TestComplete_Capabilities(t *testing.T) {
	caps := func(s *Script) string {
		res := newClient(t, s).result("initialize", map[string]any{"protocolVersion": "2025-11-25"})
		b, _ := json.Marshal(res["capabilities"])
		return string(b)
	}
	with := mustLoad(t, "script-complete.yaml")
	if got := caps(with); got != `{"completions":{},"prompts":{"listChanged":false},"resources":{"listChanged":false}}` {
		t.Errorf("script-complete.yaml declares %s", got)
	}
	added, err := Parse("events.yaml", []byte("server: {name: s, version: \"1\"}\ntools: [{name: t, answers: [{text: x}]}]\nevents:\n  - after: {requests: 1}\n    addPrompts: [{name: p, arguments: [{name: a, complete: {values: [x]}}], messages: [{role: user, text: x}]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := caps(added); !strings.Contains(got, `"completions":{}`) {
		t.Errorf("a script whose event adds a prompt that completes declares %s", got)
	}
	without := mustLoad(t, "script-basic.yaml")
	if got := caps(without); strings.Contains(got, "completions") {
		t.Errorf("script-basic.yaml declares %s", got)
	}
	r, ok := newClient(t, without).ask("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "x"}, "argument": map[string]any{"name": "a", "value": ""}})
	if ok {
		t.Errorf("a script without completions answered completion/complete: %+v (want it left to the engine's -32601)", r)
	}
}

// TestComplete_BadScripts: mcpmock check names the file, line and field
// of a completion it cannot serve.
func TestComplete_BadScripts(t *testing.T) {
	const head = "server: {name: s, version: \"1\"}\n"
	tests := []struct {
		name, script string
		want         string
	}{
		{"neither values nor answers", `prompts:
  - name: p
    arguments: [{name: a, complete: {}}]
    messages: [{role: user, text: x}]
`, `test.yaml:4:37: prompts[0].arguments[0].complete: complete needs values or answers (a completion of prompt "p" argument "a")`},
		{"values not a list", `prompts:
  - name: p
    arguments: [{name: a, complete: {values: abc}}]
    messages: [{role: user, text: x}]
`, `test.yaml:4:46: prompts[0].arguments[0].complete.values: want a list, got a string`},
		{"a value not a string", `prompts:
  - name: p
    arguments: [{name: a, complete: {values: [x, 3]}}]
    messages: [{role: user, text: x}]
`, `test.yaml:4:50: prompts[0].arguments[0].complete.values[1]: want a string, got a number`},
		{"a value twice", `prompts:
  - name: p
    arguments: [{name: a, complete: {values: [x, y, x]}}]
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.values[2]: value "x" is given twice (first as [0])`},
		{"an empty value", `prompts:
  - name: p
    arguments: [{name: a, complete: {values: [""]}}]
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.values[0]: an empty value completes nothing`},
		{"when over an argument the prompt lacks", `prompts:
  - name: p
    arguments:
      - name: a
        complete: {answers: [{when: {subset: {lang: x}}, values: [y]}]}
    messages: [{role: user, text: x}]
`, `test.yaml:6:46: prompts[0].arguments[0].complete.answers[0].when.subset.lang: prompt "p" has no argument "lang" (it has: a)`},
		{"when on elicited", `prompts:
  - name: p
    arguments:
      - name: a
        complete: {answers: [{when: {elicited: {action: accept}}, values: [y]}]}
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.answers[0].when: a completion asks the client nothing: when takes exact, subset or regex over the arguments`},
		{"total below the values", `prompts:
  - name: p
    arguments:
      - name: a
        complete: {answers: [{values: [x, y], total: 1}]}
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.answers[0].total: total 1 is less than the 2 values given`},
		{"an answer of more than 100", `prompts:
  - name: p
    arguments:
      - name: a
        complete: {answers: [{values: [` + strings.Repeat("v,", 100) + `w]}]}
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.answers[0].values: 101 values: a completion holds at most 100`},
		{"error and values", `prompts:
  - name: p
    arguments:
      - name: a
        complete: {answers: [{error: {code: -32602, message: no}, values: [x]}]}
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.answers[0].error: a JSON-RPC error cannot also carry values, total or hasMore`},
		{"a variable the template lacks", `resourceTemplates:
  - uriTemplate: "file:///logs/{service}"
    name: logs
    complete:
      servce: {values: [api]}
`, `test.yaml:6:7: resourceTemplates[0].complete.servce: resource template "file:///logs/{service}" has no variable "servce" (it has: service); did you mean "service"?`},
		{"a template without its }", `resourceTemplates:
  - {uriTemplate: "file:///logs/{service", name: logs}
`, `resourceTemplates[0].uriTemplate: uriTemplate "file:///logs/{service": a { without its }`},
		{"a template twice", `resourceTemplates:
  - {uriTemplate: "file:///{a}", name: one}
  - {uriTemplate: "file:///{a}", name: two}
`, `test.yaml:4:5: resourceTemplates[1]: duplicate resource template "file:///{a}" (first at line 3)`},
		{"capabilities without completions", `  capabilities: {prompts: {}}
prompts:
  - name: p
    arguments: [{name: a, complete: {values: [x]}}]
    messages: [{role: user, text: x}]
`, `server.capabilities: a prompt argument or resource template completes (complete:), but these capabilities declare no completions: add completions: {}`},
		{"unknown field", `prompts:
  - name: p
    arguments: [{name: a, complete: {value: [x]}}]
    messages: [{role: user, text: x}]
`, `prompts[0].arguments[0].complete.value: unknown field "value" (known: values, answers); did you mean "values"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := head + tt.script
			if strings.HasPrefix(tt.script, "  capabilities") {
				script = "server:\n  name: s\n  version: \"1\"\n" + tt.script
			}
			_, err := Parse("test.yaml", []byte(script))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant an error containing\n%s", err, tt.want)
			}
		})
	}
}

// TestComplete_Override: a script without server completes the prompts it
// names, and passes on what it does not know.
func TestComplete_Override(t *testing.T) {
	s, err := Parse("o.yaml", []byte("prompts:\n  - name: p\n    arguments: [{name: a, complete: {values: [xa, xb]}}, {name: b}]\n    messages: [{role: user, text: x}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(name, arg string) string {
		r, ok := newClient(t, s).ask("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": name}, "argument": map[string]any{"name": arg, "value": "x"}})
		if !ok {
			return "(falls through)"
		}
		return string(r.Result)
	}
	got := []string{ask("p", "a"), ask("p", "b"), ask("other", "a")}
	want := []string{`{"completion":{"total":2,"values":["xa","xb"]}}`, "(falls through)", "(falls through)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
