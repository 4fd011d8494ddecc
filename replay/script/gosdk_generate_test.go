package script_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// TestGoSDK_FromTape: a script made from the shipped recordings of
// server-everything (TS SDK client, stdio and Streamable HTTP) answers
// go-sdk's client as server-everything answered: the same tools, and for
// each recorded call the recorded result. A client that asks for
// 2026-07-28 falls back to initialize, as server-everything spoke only
// 2025-11-25 (TestGoSDK_FromTapeVersions).
func TestGoSDK_FromTape(t *testing.T) {
	for _, cassette := range []string{"everything-stdio.db", "everything-http.db"} {
		tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", cassette))
		if err != nil {
			t.Fatal(err)
		}
		path, out := scriptFile(t, "everything.yaml", tape)
		// server-everything's instructions hold an emoji, which go-yaml
		// alone writes as a \U escape in one double-quoted line.
		instructions := tape.Sessions[0].Info.Handshake.Instructions
		if !strings.ContainsRune(instructions, '🎉') || bytes.Contains(out, []byte(`\U`)) || !bytes.Contains(out, []byte("instructions: |")) {
			t.Errorf("%s: want the recorded instructions (with their emoji) written as a block, not escaped", cassette)
		}
		calls, tools := recordedCalls(t, tape)
		if len(calls) == 0 || len(tools) == 0 {
			t.Fatalf("%s: no tools/call or tools/list recorded", cassette)
		}
		for _, tc := range transports {
			t.Run(cassette+"/"+tc.name, func(t *testing.T) {
				cs := connect(t, tc, path, nil)
				ctx := ctxT(t)
				if got := cs.InitializeResult().Instructions; got != instructions {
					t.Errorf("instructions %q, recorded %q", got, instructions)
				}
				var listed []string
				for tl, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					listed = append(listed, tl.Name)
				}
				if !slices.Equal(listed, tools) {
					t.Errorf("tools %q, recorded %q", listed, tools)
				}
				for _, c := range calls {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					if got, want := normalResult(t, res), normalResult(t, c.result); got != want {
						t.Errorf("%s:\n got %s\nwant %s (recorded)", c.name, got, want)
					}
				}
			})
		}
	}
}

type recordedCall struct {
	name   string
	args   map[string]any
	result json.RawMessage
}

// recordedCalls returns the tools/call requests of a tape with their
// results, and the names the last tools/list gave.
func recordedCalls(t *testing.T, tape *store.Tape) (calls []recordedCall, tools []string) {
	t.Helper()
	type frame struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	for _, s := range tape.Sessions {
		asked := map[string]frame{}
		for _, m := range s.Messages {
			var f frame
			if json.Unmarshal(m.Frame, &f) != nil {
				continue
			}
			if m.Dir == store.C2S && f.Method != "" {
				asked[string(f.ID)] = f
				continue
			}
			req, ok := asked[string(f.ID)]
			if m.Dir != store.S2C || !ok || f.Method != "" || f.Result == nil {
				continue
			}
			switch req.Method {
			case "tools/call":
				calls = append(calls, recordedCall{req.Params.Name, req.Params.Arguments, f.Result})
			case "tools/list":
				var l mcp.ListToolsResult
				if err := json.Unmarshal(f.Result, &l); err != nil {
					t.Fatal(err)
				}
				tools = tools[:0]
				for _, tl := range l.Tools {
					tools = append(tools, tl.Name)
				}
			}
		}
	}
	return calls, tools
}

// normalResult is a tool result as go-sdk reads it, written back: the
// same answer gives the same text whichever era carried it.
func normalResult(t *testing.T, v any) string {
	t.Helper()
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&res)
	if err != nil {
		t.Fatal(err)
	}
	// 2026-07-28 answers say they are complete, and carry the server's
	// identity in _meta.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "resultType")
	delete(m, "_meta")
	b, _ = json.Marshal(m)
	return string(b)
}

// TestGoSDK_FromTapeEvents: go-sdk's server drops a tool and adds one on
// the second call of unlock, and says so itself
// (notifications/tools/list_changed). mcpspy records go-sdk's client
// using it over Streamable HTTP. The script made from that recording
// serves go-sdk's client, over each transport and era, the first tools,
// then after the second unlock tells it the list changed and lists the
// new set, whose tool answers as recorded.
func TestGoSDK_FromTapeEvents(t *testing.T) {
	tape := recordUnlocking(t)
	path, out := scriptFile(t, "locks.yaml", tape)
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			changed := make(chan struct{}, 4)
			cs := connect(t, tc, path, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}})
			before, after, secret := unlock(t, ctxT(t), cs, changed)
			if before != "old unlock" || after != "secret unlock" || secret != "the secret is 42" {
				t.Errorf("tools %q, then %q, secret %q; want what was recorded\n%s", before, after, secret, out)
			}
		})
	}
}

// recordUnlocking records, through mcpspy's HTTP proxy, go-sdk's client
// unlocking go-sdk's server (2025-11-25, where the server's
// notifications come on the GET stream).
func recordUnlocking(t *testing.T) *store.Tape {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "locks", Version: "1.0.0"}, nil)
	answer := func(text string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
	}
	var unlocks atomic.Int32
	s.AddTool(&mcp.Tool{Name: "old", InputSchema: json.RawMessage(`{"type":"object"}`)}, answer("old"))
	s.AddTool(&mcp.Tool{Name: "unlock", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if unlocks.Add(1) == 2 {
			s.RemoveTools("old")
			s.AddTool(&mcp.Tool{Name: "secret", InputSchema: json.RawMessage(`{"type":"object"}`)}, answer("the secret is 42"))
		}
		return answer("unlocked")(ctx, req)
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer up.Close()

	db := filepath.Join(t.TempDir(), "locks.db")
	w, err := store.NewWriter(db, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proxy, stop := httpProxying(t, ctx, w, up.URL)

	changed := make(chan struct{}, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxy}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if before, after, secret := unlock(t, ctx, cs, changed); before != "old unlock" || after != "secret unlock" || secret != "the secret is 42" {
		t.Fatalf("go-sdk's server listed %q, then %q, and the secret was %q", before, after, secret)
	}
	cs.Close()
	return finishRecording(t, stop, w, db)
}

// unlock is what the host does in both tests, live and replayed: list the
// tools, call unlock twice, wait to be told the list changed, list them
// again and call the new tool.
func unlock(t *testing.T, ctx context.Context, cs *mcp.ClientSession, changed <-chan struct{}) (before, after, secret string) {
	t.Helper()
	before = toolNames(t, cs)
	for range 2 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "unlock"}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after the second unlock")
	}
	after = toolNames(t, cs)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return before, after, text(t, res)
}

// toolNames lists a session's tools, sorted, joined by spaces.
func toolNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(ctxT(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// TestGoSDK_FromTapeTiming: with WithTiming, the script made from
// server-everything's recording paces its progress as the server did.
// go-sdk's client calls the tool that sent progress; its steps and answer
// may not come sooner than recorded (delays only wait, so the bound
// cannot fail on a slow machine), and without WithTiming they come at once.
func TestGoSDK_FromTapeTiming(t *testing.T) {
	tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	var call recordedCall
	var took time.Duration // from the request to its answer, as recorded
	for _, s := range tape.Sessions {
		var sent time.Time
		for _, m := range s.Messages {
			var f struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
					Meta      map[string]any `json:"_meta"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(m.Frame, &f) != nil {
				continue
			}
			switch {
			case f.Method == "tools/call" && f.Params.Meta["progressToken"] != nil && call.name == "":
				call, sent = recordedCall{name: f.Params.Name, args: f.Params.Arguments}, m.Time
			case f.Method == "" && !sent.IsZero() && took == 0 && len(f.Result) > 0:
				took = m.Time.Sub(sent)
			}
		}
	}
	if call.name == "" || took < 50*time.Millisecond {
		t.Fatalf("the recording has no call with progress that took a while (%q, %v)", call.name, took)
	}
	tc := transports[0] // stdio, 2025-11-25: progress goes to the call's token
	for _, timed := range []bool{true, false} {
		var opts []script.FromTapeOption
		if timed {
			opts = append(opts, script.WithTiming())
		}
		path, out := scriptFile(t, "everything.yaml", tape, opts...)
		cs := connect(t, tc, path, nil)
		params := &mcp.CallToolParams{Name: call.name, Arguments: call.args}
		params.SetProgressToken("p1")
		start := time.Now()
		if _, err := cs.CallTool(ctxT(t), params); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		want := took.Round(time.Millisecond) - 5*time.Millisecond // each delay rounds to the millisecond
		if timed && elapsed < want {
			t.Errorf("with timing, %s answered in %v; recorded %v", call.name, elapsed, took)
		}
		if timed && !strings.Contains(string(out), "progress: 1, total: 3, delay: ") {
			t.Errorf("with timing, the progress steps have no delay of their own:\n%s", out)
		}
		if !timed && strings.Contains(string(out), "delay:") {
			t.Errorf("without timing the script has delays:\n%s", out)
		}
	}
}

// scriptFile writes the script FromTape makes of tape into a file named
// name in a temporary directory, and returns its path and text.
func scriptFile(t *testing.T, name string, tape *store.Tape, opts ...script.FromTapeOption) (path string, out []byte) {
	t.Helper()
	out, err := script.FromTape(tape, opts...)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, out
}
