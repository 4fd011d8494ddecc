package script_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestOverride_LayersOverCassette: `mcpmock serve override.yaml recorded.jsonl`
// answers from the script first and from the recording of server-everything
// for the rest; a go-sdk client talks to the binary over stdio.
func TestOverride_LayersOverCassette(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	root := peertest.ModuleRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(mock, "serve",
		filepath.Join(root, "cassettes", "script-override.yaml"),
		filepath.Join(root, "cassettes", "everything-stdio.jsonl"))
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptape-interop", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "mcp-servers/everything" {
		t.Errorf("initialize should come from the recording; serverInfo.name = %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "failing on purpose"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "echo refused: failing on purpose") {
		t.Errorf("scripted answer: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from mcptape"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "hello from mcptape") {
		t.Errorf("recorded answer: %+v %v", res, err)
	}
}

// TestMcpmockCheck: the binary's check and serve refuse a bad script with
// file:line and the field path, and accept the examples.
func TestMcpmockCheck(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := writeFile(bad, "tools:\n  - name: a\n    answers: [{text: \"{{.args\"}]\n"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", bad}, {"serve", bad}} {
		out, err := exec.Command(mock, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), bad+":3:22: tools[0].answers[0].text: template does not parse") {
			t.Errorf("mcpmock %s: %v\n%s", args[0], err, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(peertest.ModuleRoot(), "cassettes", "script-*"))
	out, err := exec.Command(mock, append([]string{"check"}, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("mcpmock check on the examples: %v\n%s", err, out)
	}
}
