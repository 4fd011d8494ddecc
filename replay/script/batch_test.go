package script_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// lineClient talks to a server over stdio pipes, a JSON line at a time.
type lineClient struct {
	t     *testing.T
	w     io.WriteCloser
	lines *bufio.Scanner
}

func newLineClient(t *testing.T, srv *replay.Server) *lineClient {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	cw, cr, done := servePipes(ctx, srv)
	t.Cleanup(func() {
		// Closing our reading end too: a server still writing lines no
		// one reads (a test that failed midway) gets an error, not a
		// write that blocks for ever.
		cw.Close()
		cr.Close()
		select {
		case <-done:
		case <-ctx.Done():
			t.Error("the server did not stop")
		}
		cancel()
	})
	return &lineClient{t: t, w: cw, lines: bufio.NewScanner(cr)}
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next is the next line the server wrote, compacted.
func (c *lineClient) next() string {
	c.t.Helper()
	if !c.lines.Scan() {
		c.t.Fatalf("the server said nothing more: %v", c.lines.Err())
	}
	var v any
	if err := json.Unmarshal(c.lines.Bytes(), &v); err != nil {
		c.t.Fatalf("not JSON: %s", c.lines.Bytes())
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func initializeAs(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"batcher","version":"1"}}}`
}

// TestBatch_Stdio: a 2025-03-26 client's batch gets one array with the
// answer of each request in it, in the batch's order, and nothing for its
// notifications; a batch with no requests gets nothing at all, an empty
// one a single error, a batch in a batch an error in its place. The spec
// has 2025-03-26 servers receive batches (MUST), and later versions
// refuse them.
func TestBatch_Stdio(t *testing.T) {
	c := newLineClient(t, serve(t, "script-basic.yaml"))
	c.send(initializeAs("2025-03-26"))
	if got := c.next(); !strings.Contains(got, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	steps := []struct{ name, send, want string }{
		{"requests and a notification", `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}},` +
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":"p","method":"ping"}]`,
			`[{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"Hello, Ada! (call 1)","type":"text"}]}},{"id":"p","jsonrpc":"2.0","result":{}}]`},
		{"notifications only: nothing, so the ping after is next", `[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"ping"}`, `{"id":3,"jsonrpc":"2.0","result":{}}`},
		{"empty", `[]`, `{"error":{"code":-32600,"message":"Invalid Request: an empty batch"},"id":null,"jsonrpc":"2.0"}`},
		{"a batch in a batch", `[[],{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
			`[{"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC object"},"id":null,"jsonrpc":"2.0"},{"id":4,"jsonrpc":"2.0","result":{}}]`},
	}
	for _, st := range steps {
		c.send(st.send)
		if got := c.next(); got != st.want {
			t.Errorf("%s:\ngot  %s\nwant %s", st.name, got, st.want)
		}
	}

	later := newLineClient(t, serve(t, "script-basic.yaml"))
	later.send(initializeAs("2025-06-18"))
	later.next()
	later.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	if got, want := later.next(), `{"error":{"code":-32600,"message":"Invalid Request: batches are only for protocol 2025-03-26"},"id":null,"jsonrpc":"2.0"}`; got != want {
		t.Errorf("a 2025-06-18 batch:\ngot  %s\nwant %s", got, want)
	}
}

// TestBatch_StreamableHTTP: over Streamable HTTP a batch with requests is
// answered with the array, and one without requests with 202 Accepted.
func TestBatch_StreamableHTTP(t *testing.T) {
	srv := serve(t, "script-basic.yaml")
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	url := hs.URL + "/mcp"
	resp := postResp(t, url, "", initializeAs("2025-03-26"))
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	if code, _ := post(t, url, sid, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`); code != http.StatusAccepted {
		t.Errorf("a batch of a notification: %d, want 202", code)
	}
	code, body := post(t, url, sid, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Bo"}}}]`)
	var answers []map[string]any
	if code != http.StatusOK || json.Unmarshal([]byte(body), &answers) != nil || len(answers) != 2 || answers[0]["id"] != 2.0 || answers[1]["id"] != 3.0 {
		t.Errorf("a batch of two requests: %d %s, want an array of their two answers", code, body)
	}
}
