package script_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// A whole-server script that has the tool, prompt or resource asked for
// but no answer of it for the request answers as documented (an isError
// result, a -32603 error), and the report counts the request as
// unmatched, as --strict and mocktest's assertions rely on (DESIGN.md,
// "Replay semantics").

// connectNoAnswer serves testdata/no-answer.yaml to a go-sdk client
// with no handlers.
func connectNoAnswer(t *testing.T, tc transportCase) (*replay.Server, *mcp.ClientSession) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", "no-answer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, abs)
	return srv, connectTo(t, tc, srv, mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, nil))
}

// unmatchedOnly returns the report's one unmatched request, failing the
// test unless there is exactly one; and that the report fails --strict.
func unmatchedOnly(t *testing.T, srv *replay.Server) replay.Unmatched {
	t.Helper()
	r := srv.Report()
	if len(r.Unmatched) != 1 {
		t.Fatalf("report: %d unmatched, want 1: %+v", len(r.Unmatched), r.Unmatched)
	}
	if r.Clean() {
		t.Error("report is Clean: --strict would pass")
	}
	return r.Unmatched[0]
}

func TestGoSDK_ToolWithoutMatchingAnswerIsUnmatched(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			srv, cs := connectNoAnswer(t, tc)
			ctx := ctxT(t)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Oslo"}})
			if err != nil || res.IsError || text(t, res) != "rain" {
				t.Fatalf("matching call: %+v %v", res, err)
			}
			matched := srv.Report().Matched
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Bergen"}})
			if err != nil || !res.IsError {
				t.Fatalf("call no answer matches: want an isError result, got %+v %v", res, err)
			}
			const want = `mcpmock script: no answer of tool "weather" matches the arguments {"city":"Bergen"}; nearest: the answer at line 15: arguments.city is "Bergen", want "Oslo"`
			if got := text(t, res); got != want {
				t.Errorf("isError text:\n got %s\nwant %s", got, want)
			}
			u := unmatchedOnly(t, srv)
			if u.Method != "tools/call" || !strings.Contains(u.Params, `"Bergen"`) || u.Why != want || u.Nearest != "" {
				t.Errorf("unmatched: %+v", u)
			}
			if got := srv.Report().Matched; got != matched {
				t.Errorf("matched went from %d to %d: the unanswered call counted as matched", matched, got)
			}
		})
	}
}

func TestGoSDK_PromptWithoutMatchingAnswerIsUnmatched(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			srv, cs := connectNoAnswer(t, tc)
			ctx := ctxT(t)
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "Ada"}}); err != nil {
				t.Fatalf("matching prompt: %v", err)
			}
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "Bob"}})
			const want = `mcpmock script: no answer of prompt "greet" matches the arguments {"who":"Bob"}; nearest: the answer at line 22: arguments.who is "Bob", want "Ada"`
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32603 || werr.Message != want {
				t.Fatalf("prompt no answer matches: want -32603 %q, got %v", want, err)
			}
			u := unmatchedOnly(t, srv)
			if u.Method != "prompts/get" || !strings.Contains(u.Params, `"Bob"`) || u.Why != want {
				t.Errorf("unmatched: %+v", u)
			}
		})
	}
}

func TestGoSDK_ResourceWithoutMatchingAnswerIsUnmatched(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			// No elicitation handler: the client cannot be asked, so
			// it has no reply for the resource's one answer to match.
			srv, cs := connectNoAnswer(t, tc)
			_, err := cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: "file:///notes.txt"})
			const want = `mcpmock script: no answer of resource "file:///notes.txt" matches the client's answer null`
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32603 || werr.Message != want {
				t.Fatalf("resource no answer matches: want -32603 %q, got %v", want, err)
			}
			u := unmatchedOnly(t, srv)
			if u.Method != "resources/read" || !strings.Contains(u.Params, "notes.txt") || u.Why != want {
				t.Errorf("unmatched: %+v", u)
			}
		})
	}
}

// Layered sources: a whole-server script takes every call of its tools,
// so a later source that would answer one its answers miss is not asked
// (the call is unmatched); an override passes such a call on, unless it
// has asked the client already, when its own reply is unmatched.
func TestGoSDK_LayeredScriptsWithoutMatchingAnswer(t *testing.T) {
	dir := t.TempDir()
	override := filepath.Join(dir, "override.yaml")
	// deploy answers only an accepted elicitation; weather answers Bergen,
	// which the whole-server script ahead of it has no answer for.
	if err := os.WriteFile(override, []byte(`tools:
  - name: deploy
    elicit:
      message: Deploy?
      requestedSchema: {type: object, properties: {ok: {type: boolean}}}
    answers:
      - when: {elicited: {action: accept}}
        text: deployed
  - name: weather
    answers:
      - when: {exact: {city: Bergen}}
        text: sun
`), 0o600); err != nil {
		t.Fatal(err)
	}
	whole, err := filepath.Abs(filepath.Join("testdata", "no-answer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(path string) replay.Source {
		src, err := script.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	decline := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	client := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, decline)

	t.Run("whole-server script first", func(t *testing.T) {
		srv, err := replay.NewServer([]replay.Source{load(whole), load(override)}, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cs := connectTo(t, transports[0], srv, client)
		res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Bergen"}})
		if err != nil || !res.IsError || !strings.Contains(text(t, res), "no answer of tool") {
			t.Fatalf("want the whole-server script's isError, got %+v %v", res, err)
		}
		if u := unmatchedOnly(t, srv); u.Method != "tools/call" || !strings.Contains(u.Why, `tool "weather"`) {
			t.Errorf("unmatched: %+v", u)
		}
	})

	t.Run("override, client asked already", func(t *testing.T) {
		srv, err := replay.NewServer([]replay.Source{load(override), load(whole)}, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cs := connectTo(t, transports[0], srv, client) // handshake era: asked mid-call
		res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
		const want = `mcpmock script: no answer of tool "deploy" matches the arguments {} and the client's answer {"action":"decline"}; nearest: the answer at line 7: elicited.action is "decline", want "accept"`
		if err != nil || !res.IsError || text(t, res) != want {
			t.Fatalf("want the override's isError %q, got %+v %v", want, res, err)
		}
		if u := unmatchedOnly(t, srv); u.Why != want {
			t.Errorf("unmatched: %+v", u)
		}
	})
}

// A whole-server script asked for a tool, prompt or resource it does not
// have answers as a real server does (-32602, -32002; -32602 with the
// URI in 2026-07-28), byte for byte as before, and the request counts as
// unmatched, as a recording that lacks the call leaves it: the report
// says what the script has not, and the nearest name it has.
func TestGoSDK_UnknownNameIsUnmatched(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			resourceCode := int64(-32002)
			if tc.version == "" { // 2026-07-28 retired -32002
				resourceCode = -32602
			}
			tests := []struct {
				name    string
				ask     func(context.Context, *mcp.ClientSession) error
				code    int64
				message string
				method  string
				why     string
			}{
				{"tool", func(ctx context.Context, cs *mcp.ClientSession) error {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wether", Arguments: map[string]any{"city": "Oslo"}})
					return err
				}, -32602, `tools/call: unknown tool "wether"`, "tools/call", `the script has no tool "wether"; did you mean "weather"?`},
				{"prompt", func(ctx context.Context, cs *mcp.ClientSession) error {
					_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "farewell"})
					return err
				}, -32602, `prompts/get: unknown prompt "farewell"`, "prompts/get", `the script has no prompt "farewell"`},
				{"resource", func(ctx context.Context, cs *mcp.ClientSession) error {
					_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///note.txt"})
					return err
				}, resourceCode, `resource not found: "file:///note.txt"`, "resources/read", `the script has no resource "file:///note.txt"; did you mean "file:///notes.txt"?`},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					srv, cs := connectNoAnswer(t, tc)
					err := tt.ask(ctxT(t), cs)
					var werr *jsonrpc.Error
					if !errors.As(err, &werr) || werr.Code != tt.code || werr.Message != tt.message {
						t.Fatalf("want %d %q, got %v", tt.code, tt.message, err)
					}
					if u := unmatchedOnly(t, srv); u.Method != tt.method || u.Why != tt.why || u.Nearest != "" {
						t.Errorf("unmatched: %+v, want why %q", u, tt.why)
					}
				})
			}
		})
	}
}

// A task-augmented call no answer of the tool matches: the task is
// created and ends as before, failed with the script's isError result,
// and the tools/call itself counts as unmatched, its why that result's
// text, as for a plain call (go-sdk's client has no tasks, so the client
// here is raw JSON-RPC over stdio).
func TestTasks_CallWithoutMatchingAnswerIsUnmatched(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("testdata", "task-no-answer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, file)
	toServer, fromServer, done := servePipes(ctxT(t), srv)
	msgs := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Oslo"},"task":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Bergen"},"task":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"task-2"}}`,
	}
	go func() {
		for _, m := range msgs {
			if _, err := io.WriteString(toServer, m+"\n"); err != nil {
				return // the test has failed already, at its reading
			}
		}
	}()
	answers := map[string]json.RawMessage{}
	lines := bufio.NewScanner(fromServer)
	for len(answers) < 4 && lines.Scan() {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", lines.Text(), err)
		}
		if m.ID != nil {
			answers[string(m.ID)] = m.Result
		}
	}
	toServer.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := string(answers["2"]); !strings.Contains(got, `"taskId":"task-2"`) {
		t.Errorf("the call no answer matches got %s, want its task", got)
	}
	const want = `mcpmock script: no answer of tool "weather" matches the arguments {"city":"Bergen"}; nearest: the answer at line 8: arguments.city is "Bergen", want "Oslo"`
	if got := string(answers["3"]); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, strings.ReplaceAll(want, `"`, `\"`)) {
		t.Errorf("task-2's result %s, want the isError saying %s", got, want)
	}
	u := unmatchedOnly(t, srv)
	if u.Method != "tools/call" || !strings.Contains(u.Params, `"Bergen"`) {
		t.Errorf("unmatched: %+v", u)
	}
	// The created task says nothing of why; the script says it all the
	// same.
	if u.Why != want {
		t.Errorf("why %q, want %q", u.Why, want)
	}
}

// A script made from a recording (mcpspy export --script) has no answer
// of its own for arguments never recorded: the script's built-in reply
// answers them, and counts as unmatched, as the recording replayed
// itself would (server-everything's get-sum was called with 2 and 3).
func TestGoSDK_FromTapeArgumentsNeverRecordedAreUnmatched(t *testing.T) {
	tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	path, _ := scriptFile(t, "everything.yaml", tape)
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, path)
			cs := connectTo(t, tc, srv, mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, nil))
			ctx := ctxT(t)
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}}); err != nil || res.IsError {
				t.Fatalf("recorded arguments: %+v %v", res, err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 4, "b": 5}})
			const want = `mcpmock script: no answer of tool "get-sum" matches the arguments {"a":4,"b":5}; nearest: the answer at line 233: arguments.a is 4, want 2; arguments.b is 5, want 3`
			if err != nil || !res.IsError || text(t, res) != want {
				t.Fatalf("arguments never recorded: want the isError %q, got %+v %v", want, res, err)
			}
			if u := unmatchedOnly(t, srv); u.Method != "tools/call" || u.Why != want {
				t.Errorf("unmatched: %+v", u)
			}
		})
	}
}
