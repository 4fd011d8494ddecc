package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/vcr"
)

// recordParallel records into path, through mcpspy's HTTP recorder (vcr),
// a go-sdk client that lists the tools and then calls echo with each of
// texts at once, against a go-sdk server whose echo answers none of them
// before all have arrived: the calls are in flight together, as a host's
// parallel tool calls are. Each call is sent once the one before has
// reached the server, so the calls are recorded in the order of texts,
// and their answers come back in whatever order the server's goroutines
// finish. answer is what echo answers for a text.
func recordParallel(t *testing.T, path string, texts []string, answer func(string) string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "parallel", Version: "1"}, nil)
	arrived := make(chan struct{})
	release := make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes its text once every call has arrived"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			select {
			case arrived <- struct{}{}:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer(in.Text)}}}, nil, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer up.Close()
	t.Run("record "+filepath.Base(path), func(t *testing.T) {
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "parallel-host", Version: "1"}, nil).Connect(ctx, rec.Transport(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(texts))
		for i, text := range texts {
			wg.Go(func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
				if err == nil && res.IsError {
					err = errorString("echo " + text + " answered an error")
				}
				errs[i] = err
			})
			select { // this call reached the server: the next goes out after it
			case <-arrived:
			case <-ctx.Done():
				t.Fatalf("echo %s never reached the server: %v", text, ctx.Err())
			}
		}
		close(release)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }

// Two runs of a host whose parallel tool calls went out in another order:
// diff pairs each call with its counterpart, compares their answers (the
// same), lists no request as made by one side only, and notes the order
// without counting it, unless --order asks; an answer that changed in a
// moved call is shown, leaf by leaf.
func TestMcpspy_DiffParallelCalls(t *testing.T) {
	dir := t.TempDir()
	first, second, changed := filepath.Join(dir, "first.db"), filepath.Join(dir, "second.db"), filepath.Join(dir, "changed.db")
	same := func(text string) string { return text }
	recordParallel(t, first, []string{"a", "b", "c"}, same)
	recordParallel(t, second, []string{"c", "a", "b"}, same)
	recordParallel(t, changed, []string{"c", "a", "b"}, func(text string) string {
		if text == "c" {
			return "C"
		}
		return text
	})

	// s1 is the client's server/discover probe, on a connection of its
	// own; s2 the session that called the tools.
	code, out, errOut := runCaptured("diff", "--session", "s2", "--all", "--exit-code", first, second)
	const echo = `tools/call {"arguments":{"text":"%s"},"name":"echo"}`
	call := func(text string) string { return strings.Replace(echo, "%s", text, 1) }
	want := "--- a: " + first + " s2 (5 requests)\n+++ b: " + second + " s2 (5 requests)\n" +
		"= initialize  (a#1 b#1)\n" +
		"= tools/list  (a#4 b#4)\n" +
		"= " + call("a") + "  (a#6 b#7)\n" +
		"= " + call("b") + "  (a#7 b#8)\n" +
		"= " + call("c") + "  (a#8 b#6, moved)\n" +
		"5 the same, 0 answered differently, 0 only in a, 0 only in b; 1 in another order\n" +
		"order (replay pairs requests by method and params, not by order; --order counts it as a difference):\n" +
		"  " + call("c") + ": 5th in a, 3rd in b\n"
	if code != 0 || errOut != "" || out != want {
		t.Errorf("calls in another order: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	code, out, _ = runCaptured("diff", "--session", "s2", "--order", "--exit-code", first, second)
	if code != 1 || !strings.Contains(out, "; a difference, with --order):\n") {
		t.Errorf("--order --exit-code: exit %d, stdout:\n%s", code, out)
	}

	code, out, errOut = runCaptured("diff", "--session", "s2", "--exit-code", first, changed)
	want = "--- a: " + first + " s2 (5 requests)\n+++ b: " + changed + " s2 (5 requests)\n" +
		"~ " + call("c") + "  (a#8 b#6, moved)\n" +
		`    - result.content[0].text="c"` + "\n" +
		`    + result.content[0].text="C"` + "\n" +
		"4 the same, 1 answered differently, 0 only in a, 0 only in b; 1 in another order\n" +
		"order (replay pairs requests by method and params, not by order; --order counts it as a difference):\n" +
		"  " + call("c") + ": 5th in a, 3rd in b\n"
	if code != 1 || errOut != "" || out != want {
		t.Errorf("a moved call answered otherwise: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
}
