package mcpgo_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Unlike go-sdk's CommandTransport, whose command lives until the session
// is closed, mcp-go's stdio transport starts its command with
// exec.CommandContext under the context given to Start: when that context
// ends, the server (or mcpspy wrapping it) is killed, and the client's
// next call fails. A host that starts with a timeout context loses its
// server; connect keeps Start's context for the whole test.
func TestStdioServerLivesOnlyAsLongAsStartContext(t *testing.T) {
	t.Parallel()
	for _, cancelStart := range []bool{false, true} {
		startCtx, cancel := context.WithCancel(context.Background())
		c := client.NewClient(transport.NewStdio(mcpgoServer(t), nil))
		if err := c.Start(startCtx); err != nil {
			t.Fatal(err)
		}
		ctx, done := context.WithTimeout(context.Background(), 20*time.Second)
		req := mcp.InitializeRequest{}
		req.Params.ClientInfo = mcp.Implementation{Name: "mcpgo-client", Version: "0.1.0"}
		if _, err := c.Initialize(ctx, req); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		if !cancelStart {
			if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
				t.Errorf("Start's context still live: tools/list: %v", err)
			}
		} else {
			cancel()
			// The kill is asynchronous: poll, with a deadline, until the
			// client notices that its server is gone.
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, err := c.ListTools(ctx, mcp.ListToolsRequest{})
				if err != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("Start's context ended, and the server still answers 10 s later")
					break
				}
				time.Sleep(10 * time.Millisecond) // polling, with a deadline
			}
		}
		done()
		cancel()
		_ = c.Close()
	}
}
