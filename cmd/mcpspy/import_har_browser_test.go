package main

//lint:file-ignore SA1019 2026-07-28 deprecates roots and logging (SEP-2577), which still work; the recorded page spoke 2025-11-25, and its server asked for roots and logged

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// importBrowserHAR imports one of the HARs headless Chromium wrote
// (store/testdata/harmaker) with mcpspy import, checks what it said
// ({har} stands for the HAR's path), and returns the cassette.
func importBrowserHAR(t *testing.T, name, wantStderr string) string {
	t.Helper()
	har := filepath.Join(peertest.ModuleRoot(), "store", "testdata", name)
	db := filepath.Join(t.TempDir(), "browser.db")
	code, _, stderr := runCaptured("import", "-o", db, har)
	if want := strings.ReplaceAll(wantStderr, "{har}", har); code != 0 || stderr != want {
		t.Fatalf("import: exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	return db
}

// A web app's MCP traffic, as Chromium saved it, replays: mcpspy import
// of the HAR Playwright's recordHar wrote (a .zip too), or Chrome's DevTools (with
// the CORS preflights; saved with the GET stream still open, DevTools keep
// its events' data apart), served by mcpmock over
// Streamable HTTP, answers a go-sdk client and the TypeScript SDK's
// client what server-everything answered the page: its introduction (the
// instructions in the UTF-8 it sent), the tools, echo, and the
// long-running call with its progress; and asks the go-sdk client, which
// has roots, for them, as the server asked the page.
func TestMcpspy_ImportBrowserHARReplays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, har, stderr string }{
		{"embedded bodies", "playwright-chromium.har", "mcpspy: import: 17 messages in 1 session from {har}; 1 entry carried no MCP traffic and was left out\n"},
		{"bodies in files", filepath.Join("playwright-attach", "playwright-chromium.har"), "mcpspy: import: 17 messages in 1 session from {har}; 1 entry carried no MCP traffic and was left out\n"},
		{"a zip archive", "playwright-chromium.zip", "mcpspy: import: 17 messages in 1 session from {har}; 1 entry carried no MCP traffic and was left out\n"},
		{"DevTools", "devtools-chromium.har", "mcpspy: import: 17 messages in 1 session from {har}; 4 entries carried no MCP traffic and were left out\n"},
		{"DevTools, saved with the GET stream open", "devtools-chromium-open.har", "mcpspy: import: 17 messages in 1 session from {har}; 4 entries carried no MCP traffic and were left out\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := importBrowserHAR(t, tc.har, tc.stderr)
			t.Run("go-sdk client", func(t *testing.T) { playwrightGoClient(t, db) })
			t.Run("TypeScript SDK client", func(t *testing.T) { playwrightTSClient(t, db) })
		})
	}
}

func playwrightGoClient(t *testing.T, db string) {
	srv := mocktest.NewFromCassette(t, db)
	progress := make(chan string, 10)
	logged := make(chan string, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- fmt.Sprintf("%v/%v", req.Params.Progress, req.Params.Total)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logged <- fmt.Sprint(req.Params.Data) },
	})
	client.AddRoots(&mcp.Root{URI: "file:///tmp/harmaker", Name: "harmaker"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "mcp-servers/everything" || !strings.HasPrefix(init.Instructions, "# Everything Server – Server Instructions") {
		t.Errorf("server %+v, instructions %.50q", init.ServerInfo, init.Instructions)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 14 {
		t.Fatalf("tools/list: %v, %d tools; want server-everything's 14", err, len(tools.Tools))
	}
	call := func(params *mcp.CallToolParams) string {
		t.Helper()
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatalf("%s: %v", params.Name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := call(&mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from a browser"}}); got != "Echo: hello from a browser" {
		t.Errorf("echo: %q", got)
	}
	long := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.6, "steps": 3}}
	long.SetProgressToken("go-progress")
	if got := call(long); got != "Long running operation completed. Duration: 0.6 seconds, Steps: 3." {
		t.Errorf("trigger-long-running-operation: %q", got)
	}
	for _, want := range []string{"1/3", "2/3", "3/3"} {
		select {
		case got := <-progress:
			if got != want {
				t.Errorf("progress %s, want %s", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("no progress %s", want)
		}
	}
	select {
	case got := <-logged:
		if got != "Roots updated: 1 root(s) received from client" {
			t.Errorf("log %q", got)
		}
	case <-ctx.Done():
		t.Fatal("the log the GET stream carried never came")
	}
	r := srv.Report()
	if len(r.Unmatched) > 0 || len(r.Skipped) > 0 {
		t.Errorf("unmatched %+v, skipped %+v: want every request answered, roots/list sent", r.Unmatched, r.Skipped)
	}
}

func playwrightTSClient(t *testing.T, db string) {
	srv := mocktest.NewFromCassette(t, db)
	argv := peertest.NodeScript(t, "http-client.mjs", "streamable", srv.URL(), "echo", `{"message":"hello from a browser"}`,
		"trigger-long-running-operation", `{"duration":0.6,"steps":3}`)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = peertest.NPMDir(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("http-client.mjs: %v\n%s", err, out)
	}
	var seen struct {
		Server, Echo, ProgressResult string
		Tools, Progress              int
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "mcp-servers/everything 14 Echo: hello from a browser 3 Long running operation completed. Duration: 0.6 seconds, Steps: 3."
	if got := fmt.Sprint(seen.Server, " ", seen.Tools, " ", seen.Echo, " ", seen.Progress, " ", seen.ProgressResult); got != want {
		t.Errorf("the TypeScript client saw %q, want %q", got, want)
	}
	if r := srv.Report(); len(r.Unmatched) > 0 {
		t.Errorf("unmatched %+v", r.Unmatched)
	}
}

// A HAR Chromium saved while the page's session and GET stream were still
// open: the import says the stream's messages are not in it, and what is
// there replays.
func TestMcpspy_ImportPlaywrightOpenHAR(t *testing.T) {
	db := importBrowserHAR(t, "playwright-chromium-open.har",
		"mcpspy: import: 13 messages in 1 session from {har}; 1 entry carried no MCP traffic and was left out\n"+
			"mcpspy: import: warning: 1 event-stream answer in {har} holds no text, so its messages are not in the cassette (a stream still open when the HAR was saved, or one whose body the browser left out)\n")
	playwrightTSClient(t, db)
}
