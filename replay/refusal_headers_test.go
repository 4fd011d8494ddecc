package replay_test

import (
	"context"
	"errors"
	"github.com/mcptape/mcptape/internal/peertest"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testdata/refusals.jsonl records a server that refused a tools/call with
// a bare 503 and Retry-After: 7 (and headers of its own: Date,
// Content-Length, Connection, Server, its Mcp-Session-Id), answered it
// when asked again, refused the next call with 429 and a text body
// (recorded as mcpspy records it now: the status on the call as well, the
// body as a frame of its own; the 404 below is as it recorded before,
// the body alone),
// refused notifications/roots/list_changed with 429 and Retry-After: 3,
// a call with 401 whose WWW-Authenticate the recorder redacted, and the
// last with 404 and a JSON-RPC error with a null id (the TypeScript
// SDK's "Session not found") for the session it named.

// TestReplay_RefusalWire: statuses, headers and bodies as they come out,
// byte for byte.
func TestReplay_RefusalWire(t *testing.T) {
	srv := testdataServer(t, "refusals.jsonl")
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	c := &peertest.RawHTTP{T: t, URL: hs.URL + "/mcp"}
	call := func(id int, text string) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
	}
	const (
		initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		rootsNote  = `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
	)
	steps := []struct {
		name   string
		body   string
		status int
		header http.Header // exactly these, of the headers a refusal may carry
		text   string      // the whole body
	}{
		{name: "initialize", body: initialize, status: 200},
		{name: "initialized", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202},
		{name: "503 with Retry-After", body: call(1, "a"), status: 503,
			header: http.Header{"Retry-After": {"7"}, "Content-Type": {"text/plain; charset=utf-8"}},
			text:   "Service Unavailable (mcpmock fault http-503)\n"},
		{name: "asked again: answered", body: call(2, "a"), status: 200},
		{name: "429 with its body", body: call(3, "b"), status: 429,
			header: http.Header{"Retry-After": {"60"}, "X-Ratelimit-Remaining": {"0"}, "Content-Type": {"text/plain; charset=utf-8"}},
			text:   "too many requests, try again in a minute\n"},
		{name: "a notification refused", body: rootsNote, status: 429,
			header: http.Header{"Retry-After": {"3"}, "Content-Type": {"text/plain; charset=utf-8"}},
			text:   "Too Many Requests (mcpmock fault http-429)\n"},
		{name: "the notification again: accepted", body: rootsNote, status: 202},
		{name: "401, its challenge redacted: none", body: call(4, "c"), status: 401,
			header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
			text:   "Unauthorized (mcpmock fault http-401)\n"},
		{name: "404 for the session, with its JSON body", body: call(5, "d"), status: 404,
			header: http.Header{"Content-Type": {"application/json"}},
			text:   `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`},
	}
	// What a refusal may carry; what the server owns (Date, Content-Length)
	// is checked apart.
	carried := []string{"Retry-After", "Www-Authenticate", "X-Ratelimit-Remaining", "Content-Type", "Connection", "Server", "Mcp-Session-Id"}
	for _, st := range steps {
		resp := c.Do(http.MethodPost, st.body, nil)
		live := c.SessionID
		if c.SessionID == "" {
			c.SessionID = resp.Header.Get("Mcp-Session-Id")
		}
		b := bodyOf(t, resp)
		if resp.StatusCode != st.status {
			t.Errorf("%s: status %d (%q), want %d", st.name, resp.StatusCode, b, st.status)
			continue
		}
		if st.status < 400 {
			continue
		}
		got := http.Header{}
		for _, k := range carried {
			if v := resp.Header.Values(k); v != nil {
				got[k] = v
			}
		}
		want := st.header.Clone()
		if st.status != 404 {
			want["Mcp-Session-Id"] = []string{live} // the live session's, not the recorded one
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: headers (-want +got):\n%s", st.name, diff)
		}
		if b != st.text {
			t.Errorf("%s: body %q, want %q", st.name, b, st.text)
		}
		if d := resp.Header.Get("Date"); strings.Contains(d, "27 Nov 2026 08:00:00") {
			t.Errorf("%s: the recorded Date %q was replayed", st.name, d)
		}
		if resp.ContentLength != int64(len(b)) {
			t.Errorf("%s: Content-Length %d for a body of %d bytes", st.name, resp.ContentLength, len(b))
		}
	}
}

// statusLog keeps the status of every POST a handler answers.
type statusLog struct {
	mu       sync.Mutex
	statuses []int
}

func (l *statusLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		if r.Method == http.MethodPost {
			l.mu.Lock()
			l.statuses = append(l.statuses, sw.status)
			l.mu.Unlock()
		}
	})
}

func (l *statusLog) count(status int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.statuses {
		if s == status {
			n++
		}
	}
	return n
}

func (l *statusLog) posts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.statuses)
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestGoSDK_RecordedRetryAfter: what go-sdk's Streamable HTTP client
// (v1.8.0) does with the replayed refusals.
func TestGoSDK_RecordedRetryAfter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := testdataServer(t, "refusals.jsonl")
	var log statusLog
	hs := httptest.NewServer(log.wrap(srv.Handler()))
	t.Cleanup(func() { srv.Close(); hs.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	echo := func(text string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	}

	// go-sdk takes 503 (and 429) as transient: the call fails at once
	// with the status text, the session goes on, and it does not retry,
	// Retry-After or not (v1.8.0 never reads the header). A client that
	// honoured Retry-After: 7 would have waited 7 s and got the answer.
	start := time.Now()
	_, err = echo("a")
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("first call: %v, want go-sdk's transient error naming Service Unavailable", err)
	}
	if n := log.count(http.StatusServiceUnavailable); n != 1 {
		t.Errorf("%d POSTs got 503, want 1: go-sdk does not retry", n)
	}
	if took := time.Since(start); took >= 7*time.Second {
		t.Errorf("the call took %v: go-sdk waited for Retry-After after all", took)
	}
	if res, err := echo("a"); err != nil || resultText(res) != "a" {
		t.Errorf("the host's own retry: %v, %v; want the recorded answer", res, err)
	}

	// The 429's text body is not JSON-RPC: go-sdk names the status only.
	if _, err := echo("b"); err == nil || !strings.Contains(err.Error(), "Too Many Requests") || strings.Contains(err.Error(), "try again") {
		t.Errorf("429 call: %v, want the status text alone", err)
	}

	// A 404 for the session whose body is a JSON-RPC error with a null
	// id: go-sdk surfaces a JSON-RPC error in a refusal's body, but
	// decodes none without an id, so it takes the 404 for
	// mcp.ErrSessionMissing, as from a plain one, and the connection is
	// done: the next call fails without reaching mcpmock.
	_, err = echo("d")
	var rpc *jsonrpc.Error
	if !errors.Is(err, mcp.ErrSessionMissing) || errors.As(err, &rpc) {
		t.Errorf("404 with a null-id JSON-RPC body: %v, want mcp.ErrSessionMissing", err)
	}
	posts := log.posts()
	if _, err := echo("a"); err == nil {
		t.Error("the call after the 404 succeeded")
	}
	if log.posts() != posts {
		t.Errorf("the call after the 404 reached mcpmock")
	}
}

// TestReplay_RefusalLegacy: over legacy HTTP+SSE the refused POSTs, of a
// request and of a notification, get the status and headers in place of
// 202; the stream carries nothing for them.
func TestReplay_RefusalLegacy(t *testing.T) {
	srv := testdataServer(t, "refusals.jsonl")
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := sseEvents(resp.Body)
	endpoint := <-events
	if !strings.HasPrefix(endpoint, "/message?sessionId=") {
		t.Fatalf("endpoint event %q", endpoint)
	}
	c := &peertest.RawHTTP{T: t, URL: hs.URL + endpoint}
	steps := []struct {
		body        string
		status      int
		retryAfter  string
		answerOnSSE string // in the next message on the stream
	}{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, 202, "", `"serverInfo":{"name":"picky"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, 503, "7", ""},
		{`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, 429, "3", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, 202, "", `"id":2,"result":{"content":[{"type":"text","text":"a"}]}`},
	}
	for _, st := range steps {
		r := c.Do(http.MethodPost, st.body, nil)
		b := bodyOf(t, r)
		if r.StatusCode != st.status || r.Header.Get("Retry-After") != st.retryAfter {
			t.Errorf("%.60s: %d, Retry-After %q (%q); want %d, %q", st.body, r.StatusCode, r.Header.Get("Retry-After"), b, st.status, st.retryAfter)
		}
		if st.answerOnSSE == "" {
			continue
		}
		// The next message on the stream answers this POST: nothing came
		// for the refused ones in between.
		select {
		case got := <-events:
			if !strings.Contains(got, st.answerOnSSE) {
				t.Errorf("%.60s: the stream carried %s, want %s", st.body, got, st.answerOnSSE)
			}
		case <-ctx.Done():
			t.Fatalf("%.60s: no answer on the stream", st.body)
		}
	}
}

// TestReplay_RefusedNotificationStdio: on stdio a refused notification
// has no status to be given, and a notification gets no answer: nothing
// is written for it, and the session goes on.
func TestReplay_RefusedNotificationStdio(t *testing.T) {
	srv := testdataServer(t, "refusals.jsonl")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	}, "\n") + "\n"
	var out strings.Builder
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":0,"result"`) || lines[1] != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("stdout:\n%s\nwant the initialize answer and the ping's, nothing between", out.String())
	}
}

// TestReplay_RefusalHeadersStdio: on stdio a recorded refusal is a
// -32603 error whose data carries the status and the recorded headers a
// client acts on, so that a host there can still read Retry-After.
func TestReplay_RefusalHeadersStdio(t *testing.T) {
	srv := testdataServer(t, "refusals.jsonl")
	call := func(id int, text string) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(1, "a"), call(2, "a"), call(3, "b"),
	}, "\n") + "\n"
	var out strings.Builder
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`"id":1,"error":{"code":-32603,"message":"HTTP 503 Service Unavailable (fault http-503; this transport has no HTTP status)","data":{"httpStatus":503,"headers":{"Retry-After":"7"}}}`,
		`"id":2,"result"`,
		`"id":3,"error":{"code":-32603,"message":"HTTP 429 Too Many Requests (fault http-429; this transport has no HTTP status)","data":{"httpStatus":429,"headers":{"Retry-After":"60","X-Ratelimit-Remaining":"0"}}}`,
	}
	if len(lines) != 4 {
		t.Fatalf("stdout:\n%s\nwant the initialize answer and three more", out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i+1], w) {
			t.Errorf("line %d:\n%s\nwant it to hold\n%s", i+2, lines[i+1], w)
		}
	}
}
