package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/vcr"
)

// recordSessionless records into path, through mcpspy's HTTP recorder
// (vcr), a go-sdk client speaking 2026-07-28 to a go-sdk server without
// sessions over hc: it lists the tools, echoes "one", adds, and echoes
// "two", calling split before the add and before the second echo.
// mcpspy records such a client a session per connection, so hc and split
// decide how the run splits into sessions.
func recordSessionless(t *testing.T, path string, hc *http.Client, split func()) {
	t.Helper()
	srv := gosdk.NewServer("diff-go")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()
	t.Run("record "+filepath.Base(path), func(t *testing.T) {
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		defer hc.CloseIdleConnections() // the client is done: its connections end
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "diff-host", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: rec.URL(), HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		calls := []mcp.CallToolParams{
			{Name: "echo", Arguments: map[string]any{"text": "one"}},
			{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}},
			{Name: "echo", Arguments: map[string]any{"text": "two"}},
		}
		for i, p := range calls {
			if i > 0 {
				split()
			}
			if res, err := cs.CallTool(ctx, &p); err != nil || res.IsError {
				t.Fatalf("%s: %+v, %v", p.Name, res, err)
			}
		}
	})
}

// freshConns is an http.RoundTripper that keeps one connection alive
// until split, after which the requests go over a new one.
type freshConns struct {
	mu   sync.Mutex
	used []*http.Transport // the last is in use
}

func (f *freshConns) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	if len(f.used) == 0 {
		f.used = append(f.used, &http.Transport{MaxConnsPerHost: 1})
	}
	tr := f.used[len(f.used)-1]
	f.mu.Unlock()
	return tr.RoundTrip(r)
}

func (f *freshConns) split() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.used = append(f.used, &http.Transport{MaxConnsPerHost: 1})
}

func (f *freshConns) CloseIdleConnections() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tr := range f.used {
		tr.CloseIdleConnections()
	}
}

// Two runs of one sessionless 2026-07-28 client, split differently into
// connections (one keeps a single connection alive and lets it go twice,
// the other opens one per POST): diff merges each run's connections
// in recorded order and finds them the same; with one answer changed, it
// finds exactly that, named by session:seq on each side, as show names
// the lines.
func TestMcpspy_DiffSessionlessClient(t *testing.T) {
	dir := t.TempDir()
	reuse, perPost := filepath.Join(dir, "reuse.db"), filepath.Join(dir, "per-post.db")
	kept := &freshConns{}
	recordSessionless(t, reuse, &http.Client{Transport: kept}, kept.split)
	recordSessionless(t, perPost, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, func() {})
	// reuse: s1 holds server/discover, tools/list and the first echo,
	// s2 the add, s3 the second echo; per-post: s1 to s5, one each.
	const headA, headB = " s1,s2,s3 (one client's connections, merged) (5 requests)\n", " s1,s2,s3,s4,s5 (one client's connections, merged) (5 requests)\n"
	code, out, errOut := runCaptured("diff", "--all", "--exit-code", reuse, perPost)
	want := "--- a: " + reuse + headA + "+++ b: " + perPost + headB +
		"= server/discover  (a s1:1 b s1:1)\n" +
		"= tools/list  (a s1:3 b s2:1)\n" +
		`= tools/call {"arguments":{"text":"one"},"name":"echo"}  (a s1:5 b s3:1)` + "\n" +
		`= tools/call {"arguments":{"a":2,"b":3},"name":"add"}  (a s2:1 b s4:1)` + "\n" +
		`= tools/call {"arguments":{"text":"two"},"name":"echo"}  (a s3:1 b s5:1)` + "\n" +
		"5 the same, 0 answered differently, 0 only in a, 0 only in b\n"
	if code != 0 || errOut != "" || out != want {
		t.Fatalf("two runs of one client: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	// B's second echo answered otherwise: that, and only that, differs.
	changed := filepath.Join(dir, "changed.jsonl")
	runText(t, "export", "-o", changed, perPost)
	jsonl, err := os.ReadFile(changed)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(jsonl), "\n")
	edited := 0
	for i, l := range lines {
		var m struct {
			Dir     string          `json:"dir"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Dir == "s2c" && strings.Contains(string(m.Message), `"text":"two"`) {
			lines[i] = strings.Replace(l, `"text":"two"`, `"text":"TWO"`, 1)
			edited++
		}
	}
	if edited != 1 {
		t.Fatalf("%d answers hold \"two\", want the second echo's alone", edited)
	}
	if err := os.WriteFile(changed, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCaptured("diff", "--exit-code", reuse, changed)
	want = "--- a: " + reuse + headA + "+++ b: " + changed + headB +
		`~ tools/call {"arguments":{"text":"two"},"name":"echo"}  (a s3:1 b s5:1)` + "\n" +
		`    - result.content[0].text="two"` + "\n" +
		`    + result.content[0].text="TWO"` + "\n" +
		"4 the same, 1 answered differently, 0 only in a, 0 only in b\n"
	if code != 1 || errOut != "" || out != want {
		t.Fatalf("one answer changed: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	// Each side's position is the line show prints for that call.
	for _, c := range []struct{ cassette, pos string }{{reuse, "s3:1"}, {changed, "s5:1"}} {
		found := false
		for l := range strings.SplitSeq(showOutput(t, c.cassette), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == c.pos {
				found = strings.HasSuffix(l, " tools/call echo")
				break
			}
		}
		if !found {
			t.Errorf("mcpspy show %s prints no tools/call echo line %s", c.cassette, c.pos)
		}
	}

	// --session still picks one session a side, and names seqs as for
	// two sessions: the first connections, each opened by server/discover.
	code, out, _ = runCaptured("diff", "--all", "--session", "s1", reuse, changed)
	if code != 0 || !strings.Contains(out, "= server/discover  (a#1 b#1)\n") || !strings.HasPrefix(out, "--- a: "+reuse+" s1 (") {
		t.Errorf("--session s1: exit %d:\n%s", code, out)
	}
}
