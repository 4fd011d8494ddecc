package inspector

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shippedRecordings are the real sessions between the TS SDK and
// server-everything that the repository ships, each with its JSONL twin.
var shippedRecordings = []string{"everything-stdio", "everything-http"}

// tapeSeqs returns "s1:N" for each message of the recording at path that
// keep takes, in seq order: the expectation, read from the store alone.
func tapeSeqs(tb testing.TB, path string, keep func(m *store.Message) bool) []string {
	tb.Helper()
	tape, err := store.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			if keep(m) {
				out = append(out, fmt.Sprintf("%s:%d", s.Info.ID, m.Seq))
			}
		}
	}
	return out
}

// TestModel_ShippedTimeAndKind: time: and kind:req pick, on the shipped
// real recordings (.db and .jsonl), the messages the store says they
// should: a time range cut in the middle of the trigger-long-running-
// operation exchange, written as the table prints times (local clock) and
// as RFC 3339, and the requests by the table's own word for them.
func TestModel_ShippedTimeAndKind(t *testing.T) {
	for _, name := range shippedRecordings {
		for _, ext := range []string{".db", ".jsonl"} {
			path := filepath.Join(peertest.ModuleRoot(), "cassettes", name+ext)
			t.Run(name+ext, func(t *testing.T) {
				all := tapeSeqs(t, path, func(*store.Message) bool { return true })
				tape, err := store.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				msgs := tape.Sessions[0].Messages
				// The first progress notification and the answer: times
				// a few hundred milliseconds apart, inside one exchange.
				var from, to time.Time
				for _, m := range msgs {
					method := jsonrpc.Classify(m.Frame).Method
					if method == "notifications/progress" && from.IsZero() {
						from = m.Time
					}
					if s := string(m.Frame); strings.Contains(s, "Long running operation completed") {
						to = m.Time
					}
				}
				if from.IsZero() || to.IsZero() {
					t.Fatalf("%s has no progress notification or no answer of trigger-long-running-operation", name)
				}
				within := func(m *store.Message) bool { return !m.Time.Before(from) && m.Time.Before(to) }
				m, src := openModel(t, path)
				tests := []struct {
					filter string
					want   []string
				}{
					{"time:>=" + from.Local().Format("15:04:05.000000000"),
						tapeSeqs(t, path, func(m *store.Message) bool { return !m.Time.Before(from) })},
					{"time:<" + from.UTC().Format(time.RFC3339Nano),
						tapeSeqs(t, path, func(m *store.Message) bool { return m.Time.Before(from) })},
					{"time:>=" + from.Local().Format("15:04:05.000000000") + " time:<" + to.Local().Format("15:04:05.000000000"),
						tapeSeqs(t, path, within)},
					{"!time:<" + from.Format(time.RFC3339Nano) + " time:<" + to.Format(time.RFC3339Nano),
						tapeSeqs(t, path, within)},
					{"kind:req", tapeSeqs(t, path, func(m *store.Message) bool { return jsonrpc.Classify(m.Frame).Kind == jsonrpc.Request })},
					{"kind:req|resp", tapeSeqs(t, path, func(m *store.Message) bool {
						k := jsonrpc.Classify(m.Frame).Kind
						return k == jsonrpc.Request || k == jsonrpc.Response
					})},
				}
				for _, tt := range tests {
					got := filtered(t, m, src, tt.filter)
					if len(tt.want) == 0 || len(tt.want) == len(all) {
						t.Fatalf("%q: the recording gives %d of %d messages: no test of the filter", tt.filter, len(tt.want), len(all))
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("%q: %v, want %v", tt.filter, got, tt.want)
					}
				}
			})
		}
	}
}

// recordFailures records, through mcpspy over stdio, a go-sdk client that
// calls a tool server-everything does not have (the TS SDK answers with
// an isError result) and then cancels a trigger-long-running-operation
// after its first progress notification (the TS SDK sends no answer to a
// cancelled request). The shipped recordings have neither.
func recordFailures(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "failures.db")
	argv := append([]string{peertest.Binary(t, "mcpspy"), "record", "-o", out, "--"}, peertest.ServerEverything(t, "stdio")...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	progress := make(chan struct{}, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "inspector-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through mcpspy: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Fatalf("no-such-tool: %v, %+v: want an isError result", err, res)
	}
	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 2, "steps": 20}}
		params.SetProgressToken("tok-cancel")
		_, err := cs.CallTool(callCtx, params)
		done <- err
	}()
	select {
	case <-progress:
	case <-ctx.Done():
		t.Fatal("no progress from trigger-long-running-operation in 60 s")
	}
	stop() // go-sdk sends notifications/cancelled for the call
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	// A call after the cancel: the server has read the cancel before it
	// answers this, so the cancel is in the recording when we close.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	return out
}

// TestModel_RealIsErrorAndCancel: on a real recording, a failed tool
// result carries [isError] in the table and in show, the cancelled call
// [cancelled] and its cancel [cancels #N], and the tools summary counts
// the one as an error and the other as cancelled, not pending.
func TestModel_RealIsErrorAndCancel(t *testing.T) {
	path := recordFailures(t)
	m, src := openModel(t, path)

	var text bytes.Buffer
	if _, err := m.WriteText(context.Background(), &text, src, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	var callSeq uint64
	for _, seq := range tapeSeqs(t, path, func(m *store.Message) bool {
		return jsonrpc.Classify(m.Frame).Method == "tools/call" && bytes.Contains(m.Frame, []byte("trigger-long-running-operation"))
	}) {
		fmt.Sscanf(seq, "s1:%d", &callSeq)
	}
	wantLines := []string{
		"tools/call no-such-tool [isError]",
		"tools/call trigger-long-running-operation [cancelled]",
		fmt.Sprintf("notifications/cancelled [cancels #%d]", callSeq),
	}
	for _, want := range wantLines {
		if !strings.Contains(text.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, text.String())
		}
	}
	// server-everything refuses go-sdk's server/discover, the other error.
	if got := filtered(t, m, src, "tool:no-such-tool error"); len(got) != 1 {
		t.Errorf("tool:no-such-tool error: %v, want the isError result alone", got)
	}
	// The rows of the two calls and the cancel, which fit on one screen.
	filtered(t, m, src, "method:tools/call|notifications/cancelled")

	stats := map[string]ToolStat{}
	for _, s := range m.ToolStats() {
		stats[s.Tool] = s
	}
	if s := stats["no-such-tool"]; s.Calls != 1 || s.Errors != 1 || s.Pending != 0 || s.Cancelled != 0 {
		t.Errorf("no-such-tool: %+v, want 1 call, 1 error", s)
	}
	if s := stats["trigger-long-running-operation"]; s.Calls != 1 || s.Errors != 0 || s.Pending != 0 || s.Cancelled != 1 {
		t.Errorf("trigger-long-running-operation: %+v, want 1 call, cancelled, not pending", s)
	}

	h := startApp(t, m, src, Options{}, 100, 24)
	h.waitFor(wait, []string{"no-such-tool [isError]", "[cancelled]", "[cancels #"})
	h.keys("t")
	s := h.waitFor(wait, []string{"tools (t or Esc closes)", "cancelled"})
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(strings.Trim(line, "║│ ")); len(f) >= 5 && f[0] == "trigger-long-running-operation" {
			if f[1] != "1" || f[4] != "1" {
				t.Errorf("tools summary row %q: want 1 call, 1 cancelled", line)
			}
			return
		}
	}
	t.Errorf("tools summary has no trigger-long-running-operation row:\n%s", s)
}
