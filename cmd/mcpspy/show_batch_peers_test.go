package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/inspector"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// TestMcpspy_ShowBatchServerEverything records a 2025-03-26 client's
// batch to server-everything over Streamable HTTP through mcpspy, as
// replay's TestReplay_RecordedBatchServerEverything does. The server
// answers each request of the batch as an SSE event of its own; the
// inspector's model and show pair both answers with the batch, which
// stays one row, one line.
func TestMcpspy_ShowBatchServerEverything(t *testing.T) {
	upstream := peertest.EverythingHTTP(t, "streamableHttp")
	db := filepath.Join(t.TempDir(), "batch.db")
	sp := startSpy(t, "-o", db, "--upstream", upstream)
	c := &peertest.RawHTTP{T: t, URL: sp.url + "/mcp"}
	c.Exchange(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batcher","version":"1"}}}`, http.StatusOK)
	c.Exchange(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusAccepted)
	answers := c.Exchange(http.MethodPost, `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"batched"}}},`+
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":2,"b":3}}}]`, http.StatusOK)
	if !strings.Contains(answers, "Echo: batched") || !strings.Contains(answers, `"id":3`) {
		t.Fatalf("server-everything answered the batch with %q", answers)
	}
	c.Exchange(http.MethodDelete, "", http.StatusOK)
	if err := sp.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, sp.stderr)
	}

	m, _, err := inspector.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	var batch inspector.Row
	for i := range m.Len() {
		if r, _ := m.ByIndex(i); r.Kind == jsonrpc.Batch {
			batch = r
		}
	}
	if len(batch.Batch) != 2 {
		t.Fatalf("the batch row holds %+v, want the two calls", batch.Batch)
	}
	pairs := batch.Pairs()
	if len(pairs) != 2 {
		t.Fatalf("the batch pairs with %v, want the two answers", pairs)
	}
	// The premise: each answer came as a frame of its own.
	for i, e := range batch.Batch {
		a, _ := m.ByIndex(e.Pair)
		if a.Kind != jsonrpc.Response || a.Batch != nil || a.Pair != batch.Index || a.Tool != e.Tool || a.Latency <= 0 || a.ID != e.ID {
			t.Errorf("element %d (%s %s) pairs with %+v, want a response of its own paired with the batch", i, e.Method, e.Tool, a)
		}
	}
	if brief := httpBrief(t, db, batch.Session, batch.Batch[0].PairSeq); brief.Stream != store.StreamPostSSE {
		t.Errorf("the answer came on stream %q, want %q (an SSE event of the batch's POST)", brief.Stream, store.StreamPostSSE)
	}

	lines := strings.Split(strings.TrimSuffix(showOutput(t, db), "\n"), "\n")
	var batchLine string
	answered := map[string]bool{}
	for _, l := range lines {
		switch {
		case strings.Contains(l, " → batch "):
			batchLine = l
		case strings.Contains(l, " ← resp "):
			for _, tool := range []string{"echo", "get-sum"} {
				answered[tool] = answered[tool] || strings.HasSuffix(l, " tools/call "+tool)
			}
		}
	}
	if !strings.HasSuffix(batchLine, " 2 msgs: tools/call echo, tools/call get-sum") || !strings.Contains(batchLine, " 2,3 ") {
		t.Errorf("the batch's line %q, want it to name both calls and their ids", batchLine)
	}
	if !answered["echo"] || !answered["get-sum"] {
		t.Errorf("answers paired by tool %v, want both:\n%s", answered, strings.Join(lines, "\n"))
	}
	if got := showOutput(t, "--filter", "tool:get-sum", db); strings.Count(got, "\n") != 2 || !strings.Contains(got, " → batch ") {
		t.Errorf("show --filter tool:get-sum:\n%s\nwant the batch and its answer", got)
	}
	if got := showOutput(t, "--tools", db); !strings.Contains(got, "echo") || !strings.Contains(got, "get-sum") {
		t.Errorf("show --tools:\n%s\nwant the batch's calls", got)
	}
}

// httpBrief reads the HTTP status and stream of message seq.
func httpBrief(t *testing.T, db, session string, seq uint64) store.HTTPBrief {
	t.Helper()
	var b store.HTTPBrief
	err := store.View(db, func(r *store.Reader) error {
		return r.HTTPBriefs(session, []uint64{seq}, func(_ uint64, got store.HTTPBrief) error {
			b = got
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
