package script_test

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDK_TasksScript: go-sdk v1.8's client knows nothing of tasks. It
// lists script-tasks.yaml's tools (execution and all), calls the
// optional one plainly and gets its answer, and meets the required one's
// -32601, over stdio and Streamable HTTP.
func TestGoSDK_TasksScript(t *testing.T) {
	for _, tc := range []transportCase{{"stdio", "2025-11-25", false}, {"http", "2025-11-25", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, "script-tasks.yaml", nil)
			tools, err := cs.ListTools(ctxT(t), nil)
			if err != nil || len(tools.Tools) != 6 {
				t.Fatalf("tools/list: %v %v", tools, err)
			}
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "convert"})
			if err != nil || text(t, res) != "converted" {
				t.Errorf("convert as a call: %v", err)
			}
			_, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"topic": "x"}})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != -32601 {
				t.Errorf("research as a call: %v, want -32601", err)
			}
		})
	}
}
