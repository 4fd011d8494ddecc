package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The mcpspy record command wrap suggests for a server the host reaches
// at a URL carries the entry's headers as --header flags: run as the
// shell reads it, in front of a go-sdk server that wants the entry's
// Bearer token, it records the server (not its 401). stderr says that the
// command holds the credentials; the cassette does not.
func TestMcpspy_WrapURLServerHeaders(t *testing.T) {
	srv := rerunAuthServer(t)
	dir := t.TempDir()
	entry, err := json.Marshal(map[string]any{"type": "http", "url": srv.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + rerunToken}})
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(config, []byte(`{"mcpServers": {"vault": `+string(entry)+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cassette := filepath.Join(dir, "c.db")
	code, _, stderr := runCaptured("wrap", "--mcpspy", "mcpspy", "--cassette", cassette, config)
	_, suggested, found := strings.Cut(stderr, "record it with\n")
	suggested, _, _ = strings.Cut(strings.TrimSpace(suggested), "\n")
	if code != 0 || !found || !strings.Contains(stderr, "holds the entry's headers, credentials included") {
		t.Fatalf("wrap: exit %d, stderr:\n%s", code, stderr)
	}
	// The words the shell makes of the line, NUL-separated.
	words, err := exec.Command("sh", "-c", "set -- "+suggested+`; printf '%s\0' "$@"`).Output()
	if err != nil {
		t.Fatalf("sh cannot read %q: %v", suggested, err)
	}
	args := strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
	if len(args) < 2 || args[0] != "mcpspy" || args[1] != "record" {
		t.Fatalf("suggested %q", args)
	}
	spy := startSpy(t, append(args[2:], "--listen", "127.0.0.1:0")...)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: spy.url + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect through the suggested mcpspy record: %v\nmcpspy: %s", err, spy.stderr)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"}); err != nil {
		t.Errorf("call: %v", err)
	}
	cs.Close()
	if err := spy.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, spy.stderr)
	}
	raw, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("whoami")) || bytes.Contains(raw, []byte(rerunToken)) {
		t.Errorf("the cassette lacks the call or holds the token")
	}
}
