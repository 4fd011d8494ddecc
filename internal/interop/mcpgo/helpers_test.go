package mcpgo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// mcpgoServer is internal/peertest/mcpgoserver, built once per test process.
func mcpgoServer(tb testing.TB) string {
	tb.Helper()
	return peertest.BinaryPkg(tb, "mcpgoserver", "./internal/peertest/mcpgoserver")
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	more  chan struct{} // a notification came
	mu    sync.Mutex
	seen  []string
	token string // the client's own progress token
}

func (p *progressLog) handle(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	f := n.Params.AdditionalFields
	p.mu.Lock()
	own := "other token"
	if fmt.Sprint(f["progressToken"]) == p.token {
		own = "own token"
	}
	p.seen = append(p.seen, fmt.Sprintf("progress (%s) %v/%v %v", own, f["progress"], f["total"], f["message"]))
	p.mu.Unlock()
	select {
	case p.more <- struct{}{}:
	default:
	}
}

// wait returns the first n notifications, failing the test if they do not
// all arrive within 15 s.
func (p *progressLog) wait(tb testing.TB, n int) []string {
	tb.Helper()
	deadline := time.After(15 * time.Second)
	for {
		p.mu.Lock()
		got := append([]string(nil), p.seen...)
		p.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-p.more:
		case <-deadline:
			tb.Fatalf("%d progress notifications within 15 s, want %d: %q", len(got), n, got)
		}
	}
}

// connect starts an mcp-go client on tr and lets it connect as it does by
// default (server/discover first, initialize if that fails). The test's
// Cleanup closes it.
func connect(tb testing.TB, tr transport.Interface, opts ...client.ClientOption) (*client.Client, *mcp.InitializeResult, *progressLog) {
	tb.Helper()
	// mcp-go's stdio transport runs its command under Start's context
	// (exec.CommandContext): the server lives only as long as it, so it
	// must last the test (TestStdioServerLivesOnlyAsLongAsStartContext).
	life, end := context.WithCancel(context.Background())
	c := client.NewClient(tr, opts...)
	if err := c.Start(life); err != nil {
		end()
		tb.Fatalf("start: %v", err)
	}
	tb.Cleanup(func() { c.Close(); end() })
	ctx, cancel := context.WithTimeout(life, 30*time.Second)
	defer cancel()
	p := &progressLog{more: make(chan struct{}, 1)}
	c.OnNotification(p.handle)
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpgo-client", Version: "0.1.0"}
	ir, err := c.Initialize(ctx, req)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	return c, ir, p
}

// transcript is what a client saw, compared live against replayed.
type transcript []string

// scenario lists the tools of mcpgoserver, calls echo twice and progress
// once (with the progress token given), and returns what the client saw
// in answer. The progress notifications are for the caller to wait for:
// how many arrive depends on mcp-go's server (see wantProgress).
func scenario(tb testing.TB, c *client.Client, ir *mcp.InitializeResult, p *progressLog, token string) transcript {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := transcript{fmt.Sprintf("server %s %s, protocol %s", ir.ServerInfo.Name, ir.ServerInfo.Version, ir.ProtocolVersion)}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		tb.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	out = append(out, "tools "+strings.Join(names, ","))
	call := func(name string, args map[string]any, meta *mcp.Meta) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments, req.Params.Meta = name, args, meta
		res, err := c.CallTool(ctx, req)
		if err != nil {
			tb.Fatalf("call %s: %v", name, err)
		}
		out = append(out, fmt.Sprintf("call %s: %s", name, resultText(res)))
	}
	call("echo", map[string]any{"text": "hello"}, nil)
	call("echo", map[string]any{"text": "again"}, nil)
	p.mu.Lock()
	p.token = token
	p.mu.Unlock()
	call("progress", map[string]any{"steps": 3}, &mcp.Meta{ProgressToken: token})
	return out
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if res.IsError {
		parts = append(parts, "isError")
	}
	return strings.Join(parts, " | ")
}
