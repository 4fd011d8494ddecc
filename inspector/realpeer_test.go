package inspector

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordEverything records a go-sdk client talking to server-everything
// over stdio through mcpspy, and returns the cassette.
func recordEverything(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "everything.db")
	argv := append([]string{peertest.Binary(t, "mcpspy"), "record", "-o", out, "--"}, peertest.ServerEverything(t, "stdio")...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "inspector-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through mcpspy: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, call := range []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"message": "hello inspector"}},
		{Name: "echo", Arguments: map[string]any{"message": "again"}},
		{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}},
		{Name: "get-tiny-image", Arguments: map[string]any{}},
		{Name: "no-such-tool", Arguments: map[string]any{}},
	} {
		res, err := cs.CallTool(ctx, call)
		if err != nil && call.Name != "no-such-tool" {
			t.Fatalf("call %s: %v", call.Name, err)
		}
		_ = res
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	return out
}

// TestView_RealServer shows a cassette recorded from server-everything
// (the committed example when present, else one recorded here).
func TestView_RealServer(t *testing.T) {
	paths := []string{recordEverything(t)}
	committed := filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db")
	if _, err := os.Stat(committed); err == nil {
		paths = append(paths, committed)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, src := openModel(t, path)
			if m.Len() == 0 {
				t.Fatal("empty cassette")
			}
			h := startApp(t, m, src, Options{}, 80, 24)
			h.waitFor(wait, []string{"stdio", "initialize", "everything"})
			h.keys("f")
			h.keys("tool:echo kind:response")
			h.key(keyEnter)
			h.waitFor(wait, []string{"filter: tool:echo", "tools/call echo", "Echo: "})
			h.keys("t")
			s := h.waitFor(wait, []string{"tools (t or Esc closes)", "echo", "get-sum"})
			if path != committed && !strings.Contains(s, "get-tiny-image") {
				t.Errorf("tools summary lacks get-tiny-image:\n%s", s)
			}
			h.keys("t")
			// The image result is folded.
			h.keys("f")
			h.key(ctrlU)
			h.keys("tool:get-tiny-image kind:response")
			h.key(keyEnter)
			if path != committed {
				h.key(keyEnter)
				h.waitFor(wait, []string{"‹base64"})
			}
		})
	}
}

// TestModel_RealServerFacts pins what server-everything and the go-sdk
// client really do, as the inspector shows it.
func TestModel_RealServerFacts(t *testing.T) {
	m, src := openModel(t, recordEverything(t))
	tests := []struct {
		name, filter string
		want         int
		atLeast      bool
	}{
		// go-sdk v1.8.0 asks server/discover first; server-everything
		// (handshake era) answers with an error and the client falls back.
		{"go-sdk tries server/discover", "method:server/discover kind:request", 1, false},
		{"server-everything refuses it", "method:server/discover error", 1, false},
		{"then initialize", "method:initialize kind:response", 1, false},
		// server-everything says tools changed right after initialized;
		// in our recordings it sent tools/list_changed twice.
		{"list_changed after initialized", "method:notifications/tools/list_changed dir:s2c", 1, true},
		// An unknown tool is an isError result from the TS SDK, not -32602.
		{"unknown tool is an isError result", "tool:no-such-tool kind:response error", 1, false},
		{"echo pairs", "tool:echo slow:>=0s", 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(filtered(t, m, src, tt.filter)); got != tt.want && !(tt.atLeast && got > tt.want) {
				t.Errorf("%q: %d messages, want %d", tt.filter, got, tt.want)
			}
		})
	}
}

// TestView_ShippedHAR: the inspector opens a HAR as it opens a JSONL
// export: the shipped recording of server-everything over Streamable
// HTTP, as a HAR, shows its session and calls.
func TestView_ShippedHAR(t *testing.T) {
	m, src := openModel(t, filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-http.har"))
	if m.Len() != 12 {
		t.Fatalf("%d messages, want the recording's 12", m.Len())
	}
	h := startApp(t, m, src, Options{}, 100, 24)
	h.waitFor(wait, []string{"streamable-http", "initialize", "tools/call echo"})
}
