package vcr_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/vcr"
)

// A host's test that records server-everything the first time it runs,
// into testdata/everything.db beside the test, and replays that cassette
// in every later run without starting the server (MCPTAPE_VCR=replay in
// CI fails the test instead, should the cassette be missing). The Example
// is compiled, not run: vcr needs the test's t, which an Example has not.
func ExampleNew() {
	testHostEchoes := func(t *testing.T) {
		srv := vcr.New(t, "testdata/everything.db",
			[]string{"npx", "-y", "@modelcontextprotocol/server-everything", "stdio"})
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hi" {
			t.Errorf("echo answered %q", got)
		}
		if len(srv.ToolCalls("echo")) != 1 { // what the host sent, recording or replaying
			t.Errorf("echo called %d times, want once", len(srv.ToolCalls("echo")))
		}
		srv.AssertNoUnmatched() // replaying, every request matched; recording, a no-op
	}
	_ = testHostEchoes
}
