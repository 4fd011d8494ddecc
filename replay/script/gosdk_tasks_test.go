package script_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
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

// TestTasks_WireOrder: over stdio, a task's creation is answered before
// anything of the task reaches the client (its progress, its status) and
// before the answers to requests sent after the call, on every run: the
// answer that takes time plays once the task is written.
func TestTasks_WireOrder(t *testing.T) {
	for run := range 5 {
		srv := serve(t, "script-tasks.yaml")
		toServer, fromServer, done := servePipes(ctxT(t), srv)
		lines := bufio.NewScanner(fromServer)
		msgs := []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"research","arguments":{"topic":"tides"},"task":{},"_meta":{"progressToken":7}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tasks/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"task-1"}}`,
		}
		go func() { // pipelined, while the answers are read: the pipes hold nothing
			for _, m := range msgs {
				if _, err := io.WriteString(toServer, m+"\n"); err != nil {
					return // the test has failed already, at its reading
				}
			}
		}()
		var got []string
		for len(got) < 7 && lines.Scan() {
			var m struct {
				ID     json.RawMessage
				Method string
			}
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("%q: %v", lines.Text(), err)
			}
			got = append(got, string(m.ID)+m.Method)
		}
		want := "0 1 2 notifications/progress notifications/progress notifications/tasks/status 3"
		if strings.Join(got, " ") != want {
			t.Fatalf("run %d: the client got %v, want %s", run, got, want)
		}
		toServer.Close()
		rest, _ := io.ReadAll(fromServer) // the server's end: nothing more
		if err := <-done; err != nil || len(rest) > 0 {
			t.Fatalf("run %d: ended %v, after %q", run, err, rest)
		}
		srv.Close()
	}
}
