package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// goServer is the go-sdk test server (internal/peertest/gosdkserver),
// built once per test process.
func goServer(tb testing.TB) string {
	tb.Helper()
	return peertest.BinaryPkg(tb, "gosdkserver", "./internal/peertest/gosdkserver")
}

// mcpgoServer is internal/peertest/mcpgoserver (mark3labs/mcp-go), built
// once per test process.
func mcpgoServer(tb testing.TB) string {
	tb.Helper()
	return peertest.BinaryPkg(tb, "mcpgoserver", "./internal/peertest/mcpgoserver")
}

// transcript is what a client saw, compared live against replayed.
type transcript []string

func (t *transcript) addf(format string, a ...any) { *t = append(*t, fmt.Sprintf(format, a...)) }

// notes collects notifications a Go SDK client receives.
type notes struct {
	token       string // the progress token the client sent
	progress    chan string
	listChanged chan struct{}
}

func newNotes() *notes {
	return &notes{progress: make(chan string, 100), listChanged: make(chan struct{}, 100)}
}

func (n *notes) clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			tok := "other token"
			if fmt.Sprint(req.Params.ProgressToken) == n.token {
				tok = "own token"
			}
			n.progress <- fmt.Sprintf("progress (%s) %.0f/%.0f %s", tok, req.Params.Progress, req.Params.Total, req.Params.Message)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			n.listChanged <- struct{}{}
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
}

// waitFor waits for what ch brings. The deadline catches a hang, and
// measures nothing: under -race on two busy cores, a test's multi-MiB
// answer over WebSocket once took more than 15 s (a CI run beside four
// other test runs).
func waitFor[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(45 * time.Second):
		tb.Fatalf("no %s within 45 s", what)
	}
	var zero T
	return zero
}

// goScenario drives a Go SDK client through tools, progress, list_changed
// and repeated calls, and returns what it saw.
func goScenario(tb testing.TB, t mcp.Transport, version, token string) transcript {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := newNotes()
	n.token = token
	c := mcp.NewClient(&mcp.Implementation{Name: "scenario", Version: "1.0.0"}, n.clientOptions())
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, t, so)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var out transcript
	ir := cs.InitializeResult()
	out.addf("server %s %s, protocol %s", ir.ServerInfo.Name, ir.ServerInfo.Version, ir.ProtocolVersion)
	out.addf("tools %s", toolNames(ctx, tb, cs))
	call := func(name string, args any, meta mcp.Meta) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil {
			tb.Fatalf("call %s: %v", name, err)
		}
		out.addf("call %s: %s", name, resultText(res))
	}
	call("echo", map[string]any{"text": "hello"}, nil)
	call("sum", map[string]any{"a": 2, "b": 40}, nil)
	call("counter", map[string]any{}, nil)
	call("counter", map[string]any{}, nil)
	call("slow", map[string]any{}, mcp.Meta{"progressToken": token})
	for range 3 {
		out.addf("%s", waitFor(tb, n.progress, "progress notification"))
	}
	// The server asks the client for input: an input_required result
	// and a retry in 2026-07-28, an elicitation/create request before.
	call("confirm", map[string]any{}, nil)
	if got := out[len(out)-1]; got != "call confirm: hello Ada" {
		tb.Errorf("confirm: %s, want the name the client gave", got)
	}
	call("grow", map[string]any{}, nil)
	waitFor(tb, n.listChanged, "tools/list_changed")
	out.addf("list_changed")
	out.addf("tools %s", toolNames(ctx, tb, cs))
	return out
}

func toolNames(ctx context.Context, tb testing.TB, cs *mcp.ClientSession) string {
	tb.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		tb.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if res.StructuredContent != nil {
		parts = append(parts, fmt.Sprintf("structured=%v", res.StructuredContent))
	}
	if res.IsError {
		parts = append(parts, "isError")
	}
	return strings.Join(parts, " | ")
}
