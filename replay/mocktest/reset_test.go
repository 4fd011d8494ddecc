package mocktest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay/mocktest"
)

// One server shared by several tests, as TestMain would start it: Reset
// between them makes each test's journal and report its own. The
// cassette is a real session of the TS SDK with server-everything.
func TestServer_Reset(t *testing.T) {
	cassette := filepath.Join("..", "..", "cassettes", "everything-stdio.db")
	srv, err := mocktest.Start(mocktest.Load(t, cassette))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	// The first test calls echo with an argument nothing recorded.
	ctx, cs := connect(t, srv)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "not recorded"}}); err == nil {
		t.Fatal("a call nothing recorded was answered")
	}
	cs.Close()
	if r := srv.Report(); r.Matched == 0 || len(r.Unmatched) != 1 || len(srv.ToolCalls("echo")) != 1 {
		t.Fatalf("before Reset: report %+v, echo calls %d; want the handshake matched, the call unmatched", r, len(srv.ToolCalls("echo")))
	}
	unusedBefore := srv.Report().Unused

	srv.Reset()
	r := srv.Report()
	if r.Matched != 0 || len(r.Unmatched) != 0 || len(srv.Received()) != 0 {
		t.Fatalf("after Reset: matched %d, unmatched %v, %d received; want nothing", r.Matched, r.Unmatched, len(srv.Received()))
	}
	// The first test's handshake and tools/list, used before, are
	// unused again.
	if len(r.Unused) <= len(unusedBefore) || !slices.ContainsFunc(r.Unused, func(u string) bool { return strings.Contains(u, "initialize") }) {
		t.Errorf("after Reset, unused %q; want more than before (%q), initialize among them", r.Unused, unusedBefore)
	}

	// The second test calls echo as recorded: its report is its own.
	ctx, cs = connect(t, srv)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from mcptape"}})
	if err != nil || res.IsError {
		t.Fatalf("the recorded echo call: %+v, %v", res, err)
	}
	if err := srv.Check(); err == nil || strings.Contains(err.Error(), "unmatched") {
		t.Errorf("Check after the second test: %v; want recorded calls unused and nothing unmatched", err)
	}
	if calls := srv.ToolCalls("echo"); len(calls) != 1 || !strings.Contains(string(calls[0]), "hello from mcptape") {
		t.Errorf("echo calls after Reset: %s; want the second test's alone", calls)
	}
	if r := srv.Report(); slices.ContainsFunc(r.Unused, func(u string) bool { return strings.Contains(u, "initialize") }) {
		t.Errorf("unused %q names initialize, which the second test used", r.Unused)
	}
}

// A cassette that recorded the same call twice: each live call uses up
// the next recorded one, and after Reset the count starts again from the
// first, so a test that makes the call once leaves the second unused,
// not the first.
func TestServer_Reset_RepeatedCalls(t *testing.T) {
	const twice = `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.2Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.3Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-21T10:00:00.4Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"}}}}
{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-21T10:00:00.5Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"a"}]}}}
{"session":"s1","seq":6,"dir":"c2s","time":"2026-11-21T10:00:00.6Z","message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"}}}}
{"session":"s1","seq":7,"dir":"s2c","time":"2026-11-21T10:00:00.7Z","message":{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a"}]}}}
`
	path := filepath.Join(t.TempDir(), "twice.jsonl")
	if err := os.WriteFile(path, []byte(twice), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := mocktest.Start(mocktest.Load(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	callOnce := func() {
		ctx, cs := connect(t, srv)
		defer cs.Close()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		callOnce()
		if got, want := srv.Report().Unused, []string{`twice.jsonl s1#6 tools/call {"arguments":{"message":"a"},"name":"echo"}`}; !slices.Equal(got, want) {
			t.Errorf("test %d: unused %q, want %q", i+1, got, want)
		}
		srv.Reset()
	}
}
