package replay_test

//lint:file-ignore SA1019 2026-07-28 deprecates sampling (SEP-2577), which still works; go-sdk's client answers it here, as a host of the recorded era does

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// runTSClient runs testdata/npm/replay-client.mjs to completion and
// returns what it saw.
func runTSClient(t *testing.T, token string, waitListChanged bool, args ...string) []string {
	t.Helper()
	env := []string{"TOKEN=" + token}
	if !waitListChanged {
		env = append(env, "WAIT_LIST_CHANGED=0")
	}
	return peertest.NodeTranscript(t, 90*time.Second, env, "replay-client.mjs", args...)
}

// TestReplay_ServerEverythingTSClient records server-everything with the
// TypeScript SDK client through mcpspy, then replays the cassette with
// mcpmock to the same client over stdio, Streamable HTTP, legacy SSE and
// WebSocket: progress (re-keyed), list_changed after initialized and the
// roots/list request the server sends are all replayed.
func TestReplay_ServerEverythingTSClient(t *testing.T) {
	t.Parallel()
	mock := peertest.Binary(t, "mcpmock")
	for _, recordOver := range []string{"stdio", "http"} {
		t.Run("recorded over "+recordOver, func(t *testing.T) {
			t.Parallel()
			db, live := recordEverything(t, recordOver)
			// A surprise about peers: server-everything sends
			// tools/list_changed right after initialized on stdio, but over
			// Streamable HTTP the TS client never sees one.
			if want := fmt.Sprintf("list_changed %v", recordOver == "stdio"); !slices.Contains(live, want) {
				t.Errorf("live transcript lacks %q: %q", want, live)
			}
			replayEverything(t, mock, db, live, recordOver == "stdio")
			if recordOver == "http" {
				// The same traffic as a HAR (what a browser's devtools or
				// a proxy saves), imported into a cassette of its own or
				// served as it is, replays alike: nothing the client sees
				// is lost on the way.
				har, imported := throughHAR(t, db)
				t.Run("through a HAR", func(t *testing.T) {
					replayEverything(t, mock, imported, live, false)
				})
				t.Run("from the HAR itself", func(t *testing.T) {
					replayEverything(t, mock, har, live, false)
				})
			}
		})
	}
}

// throughHAR exports db's HTTP sessions as a HAR with mcpspy export --har
// and imports that into a new cassette with mcpspy import, and returns
// the paths of both.
func throughHAR(t *testing.T, db string) (har, imported string) {
	t.Helper()
	spy := peertest.Binary(t, "mcpspy")
	dir := t.TempDir()
	har, imported = filepath.Join(dir, "traffic.har"), filepath.Join(dir, "imported.db")
	for _, argv := range [][]string{{"export", "--har", "-o", har, db}, {"import", "-o", imported, har}} {
		if out, err := exec.Command(spy, argv...).CombinedOutput(); err != nil {
			t.Fatalf("mcpspy %v: %v\n%s", argv, err, out)
		}
	}
	return har, imported
}

// recordEverything records the TS client against server-everything
// through mcpspy, over stdio or Streamable HTTP.
func recordEverything(t *testing.T, over string) (string, []string) {
	t.Helper()
	return recordThroughSpy(t, over, func(waitListChanged bool, args ...string) []string {
		return runTSClient(t, "rec-token", waitListChanged, args...)
	})
}

// recordThroughSpy runs a client against server-everything through mcpspy
// record, over stdio or Streamable HTTP, and returns the cassette and
// what the client saw. client gets its transport's arguments (stdio
// COMMAND… or http URL) and whether list_changed comes after initialized
// (on stdio only).
func recordThroughSpy(t *testing.T, over string, client func(waitListChanged bool, args ...string) []string) (string, []string) {
	t.Helper()
	spy := peertest.Binary(t, "mcpspy")
	db := filepath.Join(t.TempDir(), "everything.db")
	if over == "stdio" {
		rec := append([]string{"stdio", spy, "record", "-o", db, "--"}, peertest.ServerEverything(t, "stdio")...)
		return db, client(true, rec...)
	}
	env, port := peertest.FreePortEnv(t)
	se := peertest.Start(t, "", []string{env}, nil, nil, peertest.ServerEverything(t, "streamableHttp")...)
	se.WaitLine(t, "MCP Streamable HTTP Server listening", 30*time.Second)
	p := peertest.Start(t, "", nil, nil, nil, spy, "record", "-o", db, "--upstream", fmt.Sprintf("http://127.0.0.1:%d", port))
	url := p.WaitLine(t, "mcpspy: listening on ", 20*time.Second)
	live := client(false, "http", url+"/mcp")
	p.Stop(t, 15*time.Second)
	return db, live
}

// replayEverything replays a server-everything cassette to the TS client
// over every transport and compares with what it saw live.
func replayEverything(t *testing.T, mock, db string, live []string, waitListChanged bool) {
	t.Helper()
	tests := []struct{ name, mode, flag string }{
		{"stdio", "stdio", ""},
		{"streamable HTTP", "http", "--http"},
		{"legacy SSE", "sse", "--http"},
		{"WebSocket", "ws", "--ws"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			var got []string
			if tt.flag == "" {
				got = runTSClient(t, "replay-token", waitListChanged, "stdio", mock, "serve", "--report", report, db)
				waitReport(t, report)
			} else {
				p := peertest.Start(t, "", nil, nil, nil, mock, "serve", tt.flag, "127.0.0.1:0", db)
				url := p.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
				if tt.mode == "sse" {
					url = url[:len(url)-len("/mcp")] + "/sse"
				}
				got = runTSClient(t, "replay-token", waitListChanged, tt.mode, url)
			}
			liveRest, liveProgress := splitProgress(live)
			gotRest, gotProgress := splitProgress(got)
			if d := cmp.Diff(liveRest, gotRest); d != "" {
				t.Errorf("replay differs from live (-live +replay):\n%s", d)
			}
			if gotProgress != allProgress || !strings.HasPrefix(allProgress, liveProgress) {
				t.Errorf("progress: live %q, replayed %q; want the replay to deliver %q", liveProgress, gotProgress, allProgress)
			}
		})
	}
}

// allProgress is every progress notification server-everything sends for
// trigger-long-running-operation with steps=3.
const allProgress = "progress 1/3 2/3 3/3"

// splitProgress takes the progress line out of a transcript.
//
// A surprise about peers: the TypeScript SDK client runs notification
// handlers in a microtask but handles a response at once, dropping the
// request's progress handler. When server-everything writes its last
// progress notification right before the response, the two often arrive in
// one read and the client loses that progress ("unknown token") — live.
// mcpmock pings the client before such a reply (see ProgressBarrier), so
// the replay delivers every recorded notification; the live run may show
// fewer.
func splitProgress(seen []string) (rest []string, progress string) {
	for _, l := range seen {
		if strings.HasPrefix(l, "progress") {
			progress = l
			continue
		}
		rest = append(rest, l)
	}
	return rest, progress
}

// TestReplay_TSClientWithoutRecordedHandshake cuts the initialize exchange
// out of the shipped server-everything cassette (mcpspy export --filter)
// and replays both to the TypeScript SDK client: it connects to the cut one
// and sees exactly what it sees on the whole one, serverInfo included
// (mcpmock introduces itself from the session info).
func TestReplay_TSClientWithoutRecordedHandshake(t *testing.T) {
	t.Parallel()
	mock := peertest.Binary(t, "mcpmock")
	spy := peertest.Binary(t, "mcpspy")
	whole, err := filepath.Abs(filepath.Join("..", "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if out, err := exec.Command(spy, "export", "--filter", "!method:initialize", "-o", cut, whole).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(cut)
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `"info":`) && (strings.Contains(line, `"initialize"`) || strings.Contains(line, `"serverInfo"`)) {
			t.Fatalf("the cut cassette still holds the initialize exchange: %.200s", line)
		}
	}
	see := func(cassette string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		argv := peertest.NodeScript(t, "stdio-everything.mjs", mock, "serve", cassette)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("TS client on %s: %v; stderr:\n%s", filepath.Base(cassette), err, stderr.String())
		}
		if cassette == cut && !strings.Contains(stderr.String(), "recorded no initialize exchange") {
			t.Errorf("mcpmock did not say it answered initialize from the session info; stderr:\n%s", stderr.String())
		}
		return string(out)
	}
	want, got := see(whole), see(cut)
	if !strings.Contains(want, `"server":{"name":"mcp-servers/everything"`) {
		t.Errorf("the whole cassette's replay: %s", want)
	}
	if got != want {
		t.Errorf("the client saw on the cut cassette\n%s\non the whole one\n%s", got, want)
	}
}

// TestReplay_JournalTSClient runs the TypeScript SDK client against
// mcpmock serve --journal: the journal holds what the client sent, which
// is what it sent when the shipped cassette was recorded (same scenario),
// in order, as the cassette's own client side.
func TestReplay_JournalTSClient(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	cassette, err := filepath.Abs(filepath.Join("..", "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := peertest.NodeScript(t, "stdio-everything.mjs", mock, "serve", "--journal", journal, cassette)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("TS client: %v\n%s\nstderr:\n%s", err, out, stderr.String())
	}

	var want []string // the recorded client side: requests and notifications
	tape, err := store.Load(cassette)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tape.Sessions[0].Messages {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if m.Dir == store.C2S && json.Unmarshal(m.Frame, &msg) == nil && msg.Method != "" {
			want = append(want, fmt.Sprintf("1 %s %s", msg.ID, msg.Method))
		}
	}
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		var r replay.Received
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		if r.Time.IsZero() || (r.Method == "tools/call" && !strings.Contains(string(r.Params), `"name"`)) {
			t.Errorf("journal line lacks its time or params: %s", line)
		}
		got = append(got, fmt.Sprintf("%d %s %s", r.Session, r.ID, r.Method))
	}
	if d := cmp.Diff(want, got); d != "" || len(got) < 5 {
		t.Errorf("journal differs from the recorded client side (-recorded +journal):\n%s", d)
	}
}

// runTasksClient runs testdata/npm/tasks-client.mjs (a TypeScript SDK
// client calling server-everything's task tool) to completion and returns
// what it saw.
func runTasksClient(t *testing.T, scenario string, args ...string) []string {
	t.Helper()
	return peertest.NodeTranscript(t, 120*time.Second, nil, "tasks-client.mjs", append([]string{scenario}, args...)...)
}

// lineWith returns the first line of a transcript that starts with prefix.
func lineWith(seen []string, prefix string) string {
	for _, l := range seen {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestReplay_TasksTSClient records the TypeScript SDK client calling
// server-everything's simulate-research-query as a task (MCP Tasks,
// 2025-11-25) through mcpspy, over stdio and over Streamable HTTP: a
// task polled with tasks/get until completed and fetched with
// tasks/result, then one that asks for input (input_required, and
// elicitation/create on the tasks/result stream), then tasks/list. The
// same client, a fresh process, replays it with mcpmock over both
// transports and sees exactly what it saw live: the task ids the server
// made (its later requests carry them), every status its polls got, the
// notifications/tasks/status, the elicitation and both results.
//
// Then a host that polls differently replays the same cassette: one
// tasks/get, then tasks/result at once, then tasks/get again. Live, the
// spec has tasks/result wait for the task to end, so the last tasks/get
// says completed. The replay must say so too, though the recording holds
// no poll answered completed that early.
func TestReplay_TasksTSClient(t *testing.T) {
	t.Parallel()
	mock := peertest.Binary(t, "mcpmock")
	eagerLive := runTasksClient(t, "eager", append([]string{"stdio"}, peertest.ServerEverything(t, "stdio")...)...)
	if got := lineWith(eagerLive, "get after result"); !strings.HasPrefix(got, "get after result T1 completed") {
		t.Fatalf("live, tasks/get after tasks/result says %q, want the task completed", got)
	}
	for _, over := range []string{"stdio", "http"} {
		t.Run("recorded over "+over, func(t *testing.T) {
			t.Parallel()
			db, live := recordThroughSpy(t, over, func(_ bool, args ...string) []string {
				return runTasksClient(t, "poll", args...)
			})
			checkTaskTranscript(t, live)
			checkTaskPeers(t, db)
			checkTaskLint(t, db, taskRules)
			checkTaskScript(t, mock, db, eagerLive)
			for _, replayOver := range []string{"stdio", "http"} {
				t.Run("replayed over "+replayOver, func(t *testing.T) {
					t.Parallel()
					got := runTasksClient(t, "poll", serveArgs(t, mock, replayOver, db)...)
					if d := cmp.Diff(live, got); d != "" {
						t.Errorf("replay differs from live (-live +replay):\n%s", d)
					}
					eager := runTasksClient(t, "eager", serveArgs(t, mock, replayOver, db)...)
					for _, prefix := range []string{"result ", "get after result "} {
						if want, got := lineWith(eagerLive, prefix), lineWith(eager, prefix); got != want {
							t.Errorf("an eager host replaying: %q, live %q\nreplay saw %q", got, want, eager)
						}
					}
					if want, got := lineWith(live, "task ids"), lineWith(eager, "task ids"); !strings.HasPrefix(want, strings.TrimSuffix(got, "]")) {
						t.Errorf("an eager host got task ids %q, want the first recorded one of %q", got, want)
					}
				})
			}
		})
	}
}

// TestReplay_ClientTasksTSClient records the TypeScript SDK client, which
// takes tasks for sampling and elicitation, calling server-everything's
// trigger-sampling-request-async and trigger-elicitation-request-async
// through mcpspy, over stdio and over Streamable HTTP: the server asks
// the client to sample (then elicit) as a task of the client's, polls it
// with tasks/get and fetches it with tasks/result, during the call. The client makes a new task id every run, so a replay
// of the recording must poll and fetch the task the live client made,
// not the recorded one (which it would answer "Task not found"). The same
// client replays it with mcpmock over both transports and is asked just
// what it was asked live.
func TestReplay_ClientTasksTSClient(t *testing.T) {
	t.Parallel()
	mock := peertest.Binary(t, "mcpmock")
	for _, over := range []string{"stdio", "http"} {
		t.Run("recorded over "+over, func(t *testing.T) {
			t.Parallel()
			db, live := recordThroughSpy(t, over, func(_ bool, args ...string) []string {
				return runTasksClient(t, "client", args...)
			})
			for _, want := range []string{
				"sampling as task C1 ttl 300000: Resource trigger-sampling-request-async context: magnetic tape",
				"server asked tasks/get C1: completed",
				"server asked tasks/result C1: sampled: Resource trigger-sampling-request-async context: magnetic tape",
				"result [COMPLETED] Async sampling completed!",
				"elicitation as task C2 ttl 600000: Please provide inputs for the following fields (async task demo):",
				"server asked tasks/get C2: completed",
				"server asked tasks/result C2: accept",
				"result [COMPLETED] User provided the requested information! | User inputs: | ",
			} {
				if !slices.Contains(live, want) {
					t.Fatalf("live transcript lacks %q (a changed peer?):\n%q", want, live)
				}
			}
			checkTaskLint(t, db, clientTaskRules)
			script := exportScript(t, db)
			for _, replayOver := range []string{"stdio", "http"} {
				t.Run("replayed over "+replayOver, func(t *testing.T) {
					t.Parallel()
					got := runTasksClient(t, "client", serveArgs(t, mock, replayOver, db)...)
					if d := cmp.Diff(live, got); d != "" {
						t.Errorf("replay differs from live (-live +replay):\n%s", d)
					}
				})
			}
			t.Run("replayed to go-sdk's client, which takes no tasks", func(t *testing.T) {
				checkClientTasksToGoSDK(t, mock, db, live)
			})
			// export --script makes the tools' sample and elicit tasks
			// again, the elicited action read from the task's result: the
			// script asks the client as the server did, and answers as
			// the server did.
			t.Run("exported script", func(t *testing.T) {
				got := runTasksClient(t, "client", "stdio", mock, "serve", script)
				if d := cmp.Diff(live, got); d != "" {
					t.Errorf("the exported script differs from live (-live +script):\n%s", d)
				}
			})
		})
	}
}

// checkClientTasksToGoSDK replays the client-task recording to go-sdk's
// client (v1.8 has no tasks: it declares sampling and elicitation, not
// tasks.requests): it is asked to sample and to elicit without
// params.task, answers at once, and is not polled about tasks it never
// made; the calls get their recorded answers.
func checkClientTasksToGoSDK(t *testing.T, mock, db string, live []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "no-tasks", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "go", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			asked = append(asked, method)
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	// The wire, as the client read it: go-sdk refuses a method it does
	// not know (tasks/get) before any middleware sees it.
	var wire syncbuf.Buffer
	tr := &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: exec.Command(mock, "serve", db)}, Writer: &wire}
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"trigger-sampling-request-async", map[string]any{"prompt": "magnetic tape", "maxTokens": 10}},
		{"trigger-elicitation-request-async", map[string]any{}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		first := strings.SplitN(res.Content[0].(*mcp.TextContent).Text, "\n", 2)[0]
		if want := lineWith(live, "result [COMPLETED]"); call.name == "trigger-sampling-request-async" && want != "result "+first {
			t.Errorf("%s answered %q, live %q", call.name, first, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var clientAsked []string
	for _, m := range asked {
		if m != "notifications/tools/list_changed" && m != "ping" {
			clientAsked = append(clientAsked, m)
		}
	}
	if want := []string{"sampling/createMessage", "elicitation/create"}; !slices.Equal(clientAsked, want) {
		t.Errorf("go-sdk's client was asked %q, want %q", clientAsked, want)
	}
	for _, line := range strings.Split(wire.String(), "\n") {
		if strings.HasPrefix(line, "read:") && (strings.Contains(line, `"method":"tasks/`) || strings.Contains(line, `"task":`)) {
			t.Errorf("go-sdk's client, which takes no tasks, read %s", line)
		}
	}
}

// exportScript writes the script export --script makes of db.
func exportScript(t *testing.T, db string) string {
	t.Helper()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	out, err := script.FromTape(tape)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "exported.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// taskRules are mcpspy lint's rules about tasks a server runs
// (task-support, task-fields, task-status, task-result-meta, and
// undeclared-capability for tasks/*).
func taskRules(f lint.Finding) bool {
	return strings.HasPrefix(f.Rule, "task-") || f.Rule == "undeclared-capability" && strings.Contains(f.Message, "tasks/")
}

// clientTaskRules are the rules about tasks a client runs for the
// server: the task rules, and the shape and content of what answers the
// server's question (a CreateTaskResult answering a
// sampling/createMessage is no CreateMessageResult; the content an
// elicitation task's result gives must fit the server's form).
func clientTaskRules(f lint.Finding) bool {
	return strings.HasPrefix(f.Rule, "task-") || f.Rule == "result-shape" || f.Rule == "elicitation-content"
}

// checkTaskLint: the rules about finds nothing in what the real peers did
// with tasks: they hold to the spec's MUSTs there, and a rule that fired
// here would be wrong, or a peer changed. The recording must poll a task
// (tasks/get), or lint saw none.
func checkTaskLint(t *testing.T, db string, about func(lint.Finding) bool) {
	t.Helper()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	polls := 0
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			if bytes.Contains(m.Frame, []byte(`"tasks/get"`)) {
				polls++
			}
		}
	}
	if polls == 0 {
		t.Error("the recording has no tasks/get: the lint check would see no task")
	}
	for _, f := range lint.Tape(tape, lint.Options{}) {
		if about(f) {
			t.Errorf("lint on the real peers' tasks: %s", f)
		}
	}
}

// checkTaskScript: export --script of the recording (script.FromTape)
// makes the task tool a script tool that runs as a task again, answered
// with what tasks/result gave: an eager host gets the live result from
// it, through mcpmock serving the script.
func checkTaskScript(t *testing.T, mock, db string, eagerLive []string) {
	t.Helper()
	path := exportScript(t, db)
	got := runTasksClient(t, "eager", "stdio", mock, "serve", path)
	if want, got := lineWith(eagerLive, "result "), lineWith(got, "result "); want == "" || got != want {
		out, _ := os.ReadFile(path)
		t.Errorf("the exported script's task gave %q, live %q\nscript:\n%s", got, want, out)
	}
}

// serveArgs starts mcpmock on db when over is http and returns the
// tasks client's transport arguments for it; on stdio the client starts
// mcpmock itself.
func serveArgs(t *testing.T, mock, over, db string) []string {
	t.Helper()
	if over == "stdio" {
		return []string{"stdio", mock, "serve", db}
	}
	p := peertest.Start(t, "", nil, nil, nil, mock, "serve", "--http", "127.0.0.1:0", db)
	return []string{"http", p.WaitLine(t, "mcpmock: listening on ", 20*time.Second)}
}

// checkTaskTranscript checks what the client saw live: the task lifecycle
// the test depends on, so that a changed peer fails here, plainly.
func checkTaskTranscript(t *testing.T, live []string) {
	t.Helper()
	for _, want := range []string{
		"simulate-research-query taskSupport required",
		"created T1 working",
		"status T1 completed",
		"result # Research Report: magnetic tape",
		"status T2 input_required",
		"elicitation: ",
		"result # Research Report: cassettes (historical)",
		"list T1 completed, T2 completed",
	} {
		if lineWith(live, want) == "" {
			t.Errorf("live transcript lacks %q:\n%q", want, live)
		}
	}
}

// checkTaskPeers pins what the peers do with tasks that is not what the
// 2025-11-25 schema or spec leads one to expect, as recorded in db: a
// change in a peer fails here, and docs/REPLAY.md (Tasks) says it.
//
//   - The TypeScript SDK client (1.32.2) sends the call's task metadata
//     ({"ttl":60000}) on every tasks/get and tasks/result of
//     callToolStream, though those requests take {taskId} alone; replay
//     leaves it out of matching.
//   - server-everything keeps every task 300000 ms, whatever ttl is asked
//     (the spec lets a receiver override it).
//   - server-everything (its SDK) sends notifications/tasks/status with
//     input_required twice, no other status between: the tool sets the
//     status, then the SDK sets it again as the tool asks for input. The
//     second tells of no change.
func checkTaskPeers(t *testing.T, db string) {
	t.Helper()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	var polls, pollsWithTask, created, inputRequired, inputRequiredTwice int
	var last string
	for _, m := range tape.Sessions[0].Messages {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Task   json.RawMessage `json:"task"`
				Status string          `json:"status"`
			} `json:"params"`
			Result struct {
				Task *struct {
					TTL int `json:"ttl"`
				} `json:"task"`
			} `json:"result"`
		}
		if json.Unmarshal(m.Frame, &msg) != nil {
			continue
		}
		switch {
		case msg.Method == "tasks/get" || msg.Method == "tasks/result":
			polls++
			if string(msg.Params.Task) == `{"ttl":60000}` {
				pollsWithTask++
			}
		case msg.Result.Task != nil && msg.Result.Task.TTL == 300000:
			created++
		case msg.Method == "notifications/tasks/status" && msg.Params.Status == "input_required":
			inputRequired++
			if last == "input_required" {
				inputRequiredTwice++
			}
		}
		if msg.Method == "notifications/tasks/status" {
			last = msg.Params.Status // other messages may come between
		}
	}
	if polls == 0 || pollsWithTask != polls {
		t.Errorf("%d of %d recorded tasks/get and tasks/result carry the call's task metadata; the TypeScript SDK sent it on all", pollsWithTask, polls)
	}
	if created != 2 {
		t.Errorf("%d CreateTaskResults with a ttl of 300000 (60000 asked); server-everything gave 2", created)
	}
	if inputRequired != 2 || inputRequiredTwice != 1 {
		t.Errorf("input_required told %d times, %d of them twice in a row; server-everything told it twice in a row", inputRequired, inputRequiredTwice)
	}
}
