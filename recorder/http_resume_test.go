package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// rawMCP speaks Streamable HTTP by hand, to control disconnects and
// Last-Event-ID exactly.
type rawMCP struct {
	tb  testing.TB
	url string
	sid string
}

func (c *rawMCP) do(ctx context.Context, method, body string, hdr map[string]string) *http.Response {
	c.tb.Helper()
	req, err := http.NewRequestWithContext(ctx, method, c.url, strings.NewReader(body))
	if err != nil {
		c.tb.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.tb.Fatalf("%s %s: %v", method, c.url, err)
	}
	return resp
}

// A client reads part of a tool call's SSE answer, drops the connection,
// and resumes with GET + Last-Event-ID: the server replays the rest and the
// proxy records the resumed stream with the request's Last-Event-ID.
func TestHTTPProxy_LastEventIDResumption(t *testing.T) {
	up := peertest.EverythingHTTP(t, "streamableHttp")
	px := startHTTPProxy(t, up+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &rawMCP{tb: t, url: px.URL + "/mcp"}

	resp := c.do(ctx, "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if c.sid == "" {
		t.Fatalf("no session id (status %d)", resp.StatusCode)
	}
	resp = c.do(ctx, "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	callCtx, dropCall := context.WithCancel(ctx)
	resp = c.do(callCtx, "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0.3,"steps":3},"_meta":{"progressToken":"p"}}}`, nil)
	rd := sse.NewReader(resp.Body, 0)
	var lastID string
	for lastID == "" {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("call stream ended early: %v", err)
		}
		if bytes.Contains(ev.Data, []byte("notifications/progress")) {
			lastID = ev.ID
		}
	}
	dropCall() // the client goes away after the first progress event
	resp.Body.Close()

	// Peer surprise: server-everything's example event store returns the
	// last event id where the SDK expects a stream id, so a resumed GET
	// replays only what is stored by then and never gets live events. A
	// client therefore resumes again, from the newest id it has, until the
	// result has been replayed (polling with a deadline).
	resumeFrom := map[string]bool{}
	cursor := lastID
	gotResult := false
	for attempt := 0; !gotResult; attempt++ {
		if attempt == 40 {
			t.Fatalf("no result after %d resumptions", attempt)
		}
		resumeFrom[cursor] = true
		actx, stopAttempt := context.WithTimeout(ctx, 250*time.Millisecond)
		resp = c.do(actx, "GET", "", map[string]string{"Last-Event-ID": cursor})
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("resume: %d %s", resp.StatusCode, b)
		}
		rd = sse.NewReader(resp.Body, 0)
		for {
			ev, err := rd.Next()
			if err != nil {
				break // this attempt's window is over
			}
			if ev.HasID && ev.ID != "" && len(ev.Data) > 0 {
				cursor = ev.ID
			}
			if bytes.Contains(ev.Data, []byte(`"id":2`)) && bytes.Contains(ev.Data, []byte("completed")) {
				gotResult = true
				break
			}
		}
		stopAttempt()
		resp.Body.Close()
	}
	px.Stop()

	got := readCassette(t, px.Cassette)
	if len(got) != 1 {
		t.Fatalf("want 1 session, got %d", len(got))
	}
	var onPost, onGet []string
	for _, m := range got[0].msgs {
		if m.Dir != store.S2C {
			continue
		}
		sum := jsonrpc.Classify(m.Frame)
		label := fmt.Sprintf("%s/%s", sum.Method, sum.ID)
		switch m.HTTP.Stream {
		case "post-sse":
			if sum.Method == "notifications/progress" {
				onPost = append(onPost, label)
			}
		case "get-sse":
			onGet = append(onGet, label)
			if h := m.HTTP.RequestHeader.Get("Last-Event-Id"); !resumeFrom[h] {
				t.Errorf("resumed frame seq %d: Last-Event-ID %q, not one the client sent", m.Seq, h)
			}
			if m.HTTP.EventID == "" {
				t.Errorf("resumed frame seq %d has no event id", m.Seq)
			}
		}
	}
	if len(onPost) < 1 || len(onGet) < 1 || onGet[len(onGet)-1] != "/2" {
		t.Errorf("on the POST stream %q, on the resumed GET %q; want progress first, the result last on GET", onPost, onGet)
	}
	total := 0
	for _, l := range append(onPost, onGet...) {
		if strings.HasPrefix(l, "notifications/progress") {
			total++
		}
	}
	if total < 3 {
		t.Errorf("recorded %d progress notifications over both streams, want ≥ 3: post %q get %q", total, onPost, onGet)
	}
}
