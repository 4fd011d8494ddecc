package script_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestTSClient runs the TypeScript SDK client (testdata/npm/script-client.mjs)
// against the mcpmock binary serving the example scripts, over stdio and
// Streamable HTTP.
func TestTSClient(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	root := peertest.ModuleRoot()
	tests := []struct {
		scenario, script string
		want             string // JSON the client prints, minus volatile fields
	}{
		{"pages", "script-basic.yaml", `{"server":"demo-tools","pages":[["greet","weather"],["picture","add"],["shout"]],
			"badCursor":{"code":-32602,"message":"MCP error -32602: tools/list: invalid cursor \"not-a-cursor\"","data":null},
			"structured":{"celsius":21.5,"city":"Paris"}}`},
		{"events", "script-events.yaml", `{"server":"events-demo","calls":["unlock call 1","unlock call 2"],
			"changed":{"error":null,"tools":["unlock","status","secret"]},"tools":["unlock","status","secret"],"status":"v2"}`},
		{"progress", "script-progress.yaml", `{"server":"progress-demo","text":"built app",
			"progress":[[1,3,"compiling"],[2,3,"linking"],[3,3,"done"]],"logs":["info","debug"]}`},
		{"errors", "script-errors.yaml", `{"server":"errors-demo","divide":{"isError":true,"text":"division by zero"},
			"invalid":{"isError":true,"text":"invalid arguments for tool \"divide\": validating root: required: missing properties: [\"b\"]"},
			"strict":{"code":-32602,"message":"MCP error -32602: invalid arguments for tool \"strict\": validating root: validating /properties/count: minimum: 0/1 is less than 1.000000","data":null},
			"broken":{"code":-32000,"message":"MCP error -32000: upstream said no to {\"q\":1}","data":{"retryAfterMs":500,"upstream":"inventory"}}}`},
		{"elicit", "script-elicit.yaml", `{"server":"elicit-demo","text":"deployed web (from ts)","asked":["Deploy web to production?"]}`},
		{"sample", "script-sample.yaml", `{"server":"sample-demo","summary":"summary by ts-model: short",
			"sampled":[{"system":"You summarize in one sentence.","text":"Summarize: a long story","maxTokens":100}],"roots":"roots: file:///ts/root"}`},
		{"hang", "script-faults.yaml", `{"server":"faults-demo","hang":{"code":-32001,"message":"MCP error -32001: Request timed out","data":{"timeout":300}},"after":"fine"}`},
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, tt := range tests {
			t.Run(transport+"/"+tt.scenario, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(root, "cassettes", tt.script)
				var args []string
				if transport == "stdio" {
					args = append([]string{tt.scenario, "--", mock, "serve"}, path)
				} else {
					args = []string{tt.scenario, "--url", serveHTTP(t, mock, path)}
				}
				runTSClient(t, args, tt.want)
			})
		}
	}
}

// serveHTTP starts the mcpmock binary serving script over Streamable HTTP
// for the rest of the test, and returns its URL.
func serveHTTP(t *testing.T, mock, script string) string {
	t.Helper()
	p := peertest.Start(t, peertest.ModuleRoot(), nil, nil, nil, mock, "serve", "--http", "127.0.0.1:0", script)
	return strings.TrimSpace(p.WaitLine(t, "mcpmock: listening on ", 30*time.Second))
}

// runTSClient runs script-client.mjs with args and compares the JSON it
// prints, minus protocolVersion, with want.
func runTSClient(t *testing.T, args []string, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := peertest.NodeScript(t, "script-client.mjs", args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = peertest.ModuleRoot()
	checkTSClient(t, cmd, want)
}

// checkTSClient runs cmd, a TypeScript client that prints what it saw as
// one JSON object, and compares that, minus protocolVersion, with want.
func checkTSClient(t *testing.T, cmd *exec.Cmd, want string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var got, wantJSON map[string]any
	if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil {
		t.Fatalf("client: %v; output %q: %v; stderr:\n%s", err, out, jerr, stderr.String())
	}
	if err := json.Unmarshal([]byte(want), &wantJSON); err != nil {
		t.Fatal(err)
	}
	delete(got, "protocolVersion")
	if d := cmp.Diff(wantJSON, got); d != "" {
		t.Errorf("TS client saw (-want +got):\n%s\nstderr:\n%s", d, stderr.String())
	}
}

// TestTSClient_Tasks: script-tasks.yaml's tools through the TypeScript
// SDK 1.32.2 client's experimental tasks API (callToolStream, cancelTask,
// listTasks), over stdio and Streamable HTTP. Each task is created
// working, and ends as its answer says: completed with its result,
// failed for an isError result (the client then asks no result: it
// makes its own error), cancelled on request. One that asks the user
// first is input_required until the client's tasks/result takes the
// elicitation (on that request's stream, over HTTP). The client refuses by
// itself to call a required-task tool plainly; mcpmock refuses a task of
// a tool that has none (-32601).
func TestTSClient_Tasks(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	root := peertest.ModuleRoot()
	script := filepath.Join(root, "cassettes", "script-tasks.yaml")
	const want = `{"server":"tasks-demo",
		"research":["created task-1 working","status completed","result Report on tides: three sources agree."],
		"convert":["created task-2 working","status completed","result converted"],
		"doomed":["created task-3 working","status failed","error MCP error -32603: Task task-3 failed"],
		"deploy":["created task-4 working","status input_required","result deployed api (from ts)"],
		"forever":["created task-5 working","cancel: cancelled","status cancelled","error MCP error -32603: Task task-5 was cancelled"],
		"list":["task-1 completed","task-2 completed","task-3 failed","task-4 completed","task-5 cancelled"],
		"researchAsCall":{"code":-32600,"message":"MCP error -32600: Tool \"research\" requires task-based execution. Use client.experimental.tasks.callToolStream() instead.","data":null},
		"convertAsCall":"converted",
		"plainAsTask":{"code":-32601,"message":"MCP error -32601: tools/call plain: this tool does not run as a task (its execution.taskSupport is absent, which means forbidden): call it without params.task","data":null}}`
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			args := []string{"tasks", "--", mock, "serve", script}
			if transport == "http" {
				args = []string{"tasks", "--url", serveHTTP(t, mock, script)}
			}
			runTSClient(t, args, want)
		})
	}
}

// clientTaskScript asks the client to sample, and to elicit, as tasks of
// its own: the tools are named as server-everything's, whose calls
// tasks-client.mjs makes.
const clientTaskScript = `server: {name: client-tasks-demo, version: "1.0.0"}
tools:
  - name: trigger-sampling-request-async
    inputSchema: {type: object, properties: {prompt: {type: string}, maxTokens: {type: number}}}
    sample:
      messages: [{role: user, text: "Resource trigger-sampling-request-async context: {{.args.prompt}}"}]
      maxTokens: 10
      task: {ttl: 60000}
    answers:
      - when: {sampled: {model: tasks-client}}
        text: "sampled by {{.sampled.model}}: {{.sampled.content.text}}"
      - {isError: true, text: no reply}
  - name: trigger-elicitation-request-async
    inputSchema: {type: object}
    elicit:
      message: Who are you?
      requestedSchema: {type: object, properties: {name: {type: string}, favoriteColor: {type: string}}}
      task: true
    answers:
      - when: {elicited: {action: accept}}
        text: "{{.elicited.content.name}} likes {{.elicited.content.favoriteColor}}"
      - {isError: true, text: no reply}
`

// TestTSClient_ClientTask: the TypeScript SDK client, with a task store
// and tasks.requests.sampling.createMessage and
// tasks.requests.elicitation.create declared
// (testdata/npm/tasks-client.mjs, scenario client), is asked by a
// script's sample and elicit with task to sample and elicit as tasks of
// its own, over stdio and Streamable HTTP: it makes each task, mcpmock
// polls it with tasks/get and fetches it with tasks/result, and the
// tool's answer reads the result the task gave.
func TestTSClient_ClientTask(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	script := filepath.Join(t.TempDir(), "client-task.yaml")
	if err := os.WriteFile(script, []byte(clientTaskScript), 0o600); err != nil {
		t.Fatal(err)
	}
	const sampled = "sampled: Resource trigger-sampling-request-async context: magnetic tape"
	want := []string{
		"trigger-sampling-request-async taskSupport undefined",
		"sampling as task C1 ttl 60000: Resource trigger-sampling-request-async context: magnetic tape",
		"server asked tasks/get C1: completed",
		"server asked tasks/result C1: " + sampled,
		"result sampled by tasks-client: " + sampled,
		"elicitation as task C2 ttl undefined: Who are you?",
		"server asked tasks/get C2: completed",
		"server asked tasks/result C2: accept",
		"result Ada likes Blue",
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			args := []string{"client", "stdio", mock, "serve", script}
			if transport == "http" {
				args = []string{"client", "http", serveHTTP(t, mock, script)}
			}
			got := peertest.NodeTranscript(t, 60*time.Second, nil, "tasks-client.mjs", args...)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("the client saw (-want +got):\n%s", d)
			}
		})
	}
}

// TestTSClient_UnnamedIsUnmatched: requests that name no tool, prompt or
// resource, as the TypeScript SDK client's request() sends them (it
// checks no params), get -32602 from a whole-server script, and each
// counts as unmatched in the --report of the mcpmock binary, with a why
// that says what the request lacks.
func TestTSClient_UnnamedIsUnmatched(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	script := filepath.Join(peertest.ModuleRoot(), "replay", "script", "testdata", "no-answer.yaml")
	report := filepath.Join(t.TempDir(), "report.json")
	runTSClient(t, []string{"unnamed", "--", mock, "serve", "--report", report, script}, `{"server":"no-answer",
		"toolNoName":{"code":-32602,"message":"MCP error -32602: tools/call: params.name must be a tool name","data":null},
		"toolNoParams":{"code":-32602,"message":"MCP error -32602: tools/call: params.name must be a tool name","data":null},
		"toolNumberName":{"code":-32602,"message":"MCP error -32602: tools/call: params.name must be a tool name","data":null},
		"promptNoName":{"code":-32602,"message":"MCP error -32602: prompts/get: params.name must be a prompt name","data":null},
		"resourceNoURI":{"code":-32602,"message":"MCP error -32602: resources/read: params.uri must be a resource URI","data":null}}`)
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Matched   int
		Unmatched []struct{ Method, Params, Why string }
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	want := []struct{ Method, Params, Why string }{
		{"tools/call", `{"arguments":{"city":"Oslo"}}`, "tools/call without params.name: it names no tool"},
		{"tools/call", "", "tools/call without params: it names no tool"},
		{"tools/call", `{"name":42}`, "tools/call whose params.name is a number, not a string: it names no tool"},
		{"prompts/get", "", "prompts/get without params.name: it names no prompt"},
		{"resources/read", `{"uri":""}`, "resources/read with an empty params.uri: it names no resource"},
	}
	if d := cmp.Diff(want, r.Unmatched); d != "" {
		t.Errorf("report's unmatched (-want +got):\n%s\n%s", d, b)
	}
	if r.Matched != 1 { // initialize alone
		t.Errorf("report: %d matched, want 1 (initialize)\n%s", r.Matched, b)
	}
}
