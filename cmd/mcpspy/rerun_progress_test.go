package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that answers the long call as server-everything did, but
// without the progress it reported: rerun names the progress not heard
// again, and --exit-code counts it. The same server with its progress
// has nothing to name. (go-sdk's server, over Streamable HTTP, against
// the shipped recording of server-everything: its other answers differ
// anyway.)
func TestMcpspy_RerunProgressNotHeardAgain(t *testing.T) {
	t.Parallel()
	serve := func(steps int) string {
		s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1.0.0"}, nil)
		s.AddTool(&mcp.Tool{Name: "trigger-long-running-operation", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := 1; i <= steps; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3}); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Long running operation completed. Duration: 0.3 seconds, Steps: 3."}}}, nil
			})
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(srv.Close)
		return srv.URL + "/mcp"
	}
	const call = `tools/call {"arguments":{"duration":0.3,"steps":3},"name":"trigger-long-running-operation"}`
	const unheard = "! server notification not heard again: notifications/progress for tools/call (id 3): 3 in the recording, 0 in the rerun\n"
	for _, tt := range []struct {
		name    string
		steps   int
		unheard bool
	}{
		{"with its progress", 3, false},
		{"without", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCaptured("rerun", "--exit-code", shippedCassette(t, "everything-http.db"), "--upstream", serve(tt.steps))
			if code != 1 || strings.Contains(stdout, "~ "+call) || strings.HasSuffix(stdout, unheard) != tt.unheard {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1, the long call answered the same, and %q at the end: %v", code, stdout, stderr, unheard, tt.unheard)
			}
		})
	}
}
