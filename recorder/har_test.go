package recorder_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/store"
)

// What the HAR export (store.BuildHAR) makes of what this proxy records,
// live: each HTTP request the client made is one entry, and where the
// upstream writes its event streams in the form the export rebuilds them
// in, the rebuilt text is byte for byte what the client got.

// harView is what these tests read of a HAR entry.
type harView struct {
	Request struct {
		Method, URL string
		PostData    *struct{ Text string }
		Headers     []struct{ Name, Value string }
	}
	Response struct {
		Status  int
		Content struct{ Text string }
	}
	MCPTape struct {
		Stream       string
		RequestSeq   uint64   `json:"request_seq"`
		ResponseSeqs []uint64 `json:"response_seqs"`
	} `json:"_mcptape"`
}

// harEntries builds the HAR of the proxy's cassette and returns its
// entries, each also as a line "METHOD path status stream seqs".
func harEntries(tb testing.TB, cassette string) ([]harView, []string) {
	tb.Helper()
	tape, err := store.Load(cassette)
	if err != nil {
		tb.Fatal(err)
	}
	h, skipped := store.BuildHAR(tape, "test")
	if len(skipped) > 0 || h.Unplaced > 0 {
		tb.Fatalf("skipped %v, %d unplaced", skipped, h.Unplaced)
	}
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	var doc struct{ Log struct{ Entries []harView } }
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		tb.Fatal(err)
	}
	var lines []string
	for _, e := range doc.Log.Entries {
		_, path, _ := strings.Cut(strings.TrimPrefix(e.Request.URL, "http://"), "/")
		lines = append(lines, fmt.Sprintf("%s /%s %d %s %d %v", e.Request.Method, path, e.Response.Status,
			e.MCPTape.Stream, e.MCPTape.RequestSeq, e.MCPTape.ResponseSeqs))
	}
	return doc.Log.Entries, lines
}

// clientDo sends a request through the proxy and returns the whole answer.
func clientDo(tb testing.TB, method, url, body string, hdr ...string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestHTTPProxy_HARStreamable(t *testing.T) {
	const (
		initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		initResp = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
		inited   = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		callReq  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":5}}}`
		// The answers as the TypeScript SDK writes them.
		callSSE = "id: p1\nretry: 100\ndata:\n\n" +
			"event: message\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":5,\"progress\":1}}\n\n" +
			"event: message\nid: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n"
		getSSE     = "event: message\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
		resumedSSE = "event: message\nid: g2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n"
	)
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", "sid-1")
		sse := func(text string) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, text)
		}
		switch {
		case r.Method == "POST" && string(body) == initReq:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, initResp)
		case r.Method == "POST" && string(body) == inited:
			w.WriteHeader(http.StatusAccepted)
		case r.Method == "POST" && string(body) == callReq:
			sse(callSSE)
		case r.Method == "GET" && r.Header.Get("Last-Event-Id") == "":
			sse(getSSE)
		case r.Method == "GET" && r.Header.Get("Last-Event-Id") == "g1":
			sse(resumedSSE)
		case r.Method == "DELETE":
		default:
			http.Error(w, "unexpected", http.StatusBadRequest)
		}
	}))
	px := startHTTPProxy(t, up+"/mcp")
	sid := []string{"Mcp-Session-Id", "sid-1"}
	clientDo(t, "POST", px.URL+"/mcp", initReq)
	if code, _ := clientDo(t, "POST", px.URL+"/mcp", inited, sid...); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", code)
	}
	_, gotCall := clientDo(t, "POST", px.URL+"/mcp", callReq, sid...)
	_, gotGet := clientDo(t, "GET", px.URL+"/mcp", "", sid...)
	_, gotResumed := clientDo(t, "GET", px.URL+"/mcp", "", append(sid, "Last-Event-ID", "g1")...)
	clientDo(t, "DELETE", px.URL+"/mcp", "", sid...)
	px.Stop()

	entries, lines := harEntries(t, px.Cassette)
	want := []string{
		"POST /mcp 200 json 1 [2]",
		"POST /mcp 202 post-body 3 []",
		"POST /mcp 200 post-sse 4 [5 6]",
		"GET /mcp 200 get-sse 0 [7]",
		"GET /mcp 200 get-sse 0 [8]",
		// Neither the DELETE nor its answer carried a message: the
		// session's info keeps it.
		"DELETE /mcp 200  0 []",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Fatalf("entries (-want +got):\n%s", d)
	}
	bodies := []struct {
		name      string
		got, want string
	}{
		{"initialize request", entries[0].Request.PostData.Text, initReq},
		{"initialize answer", entries[0].Response.Content.Text, initResp},
		{"notification", entries[1].Request.PostData.Text, inited},
		{"call request", entries[2].Request.PostData.Text, callReq},
		{"call's event stream, rebuilt", entries[2].Response.Content.Text, string(gotCall)},
		{"GET stream, rebuilt", entries[3].Response.Content.Text, string(gotGet)},
		{"resumed GET stream, rebuilt", entries[4].Response.Content.Text, string(gotResumed)},
	}
	for _, b := range bodies {
		if b.got != b.want {
			t.Errorf("%s: %q, want %q", b.name, b.got, b.want)
		}
	}
	resumedFrom := ""
	for _, h := range entries[4].Request.Headers {
		if h.Name == "Last-Event-Id" {
			resumedFrom = h.Value
		}
	}
	if resumedFrom != "g1" {
		t.Errorf("the resumed GET's entry has Last-Event-Id %q, want g1", resumedFrom)
	}
}

// Legacy HTTP+SSE: the GET /sse stream (its endpoint event, then the
// answers) is one entry, each POST /message another, answered 202.
func TestHTTPProxy_HARLegacy(t *testing.T) {
	const (
		initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		initResp = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	)
	answers := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /message?sessionId=abc\n\n")
		w.(http.Flusher).Flush()
		select {
		case a := <-answers:
			io.WriteString(w, "event: message\ndata: "+a+"\n\n")
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /message", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
		if string(body) == initReq {
			answers <- initResp
		}
	})
	px := startHTTPProxy(t, serveHTTP(t, mux)+"/sse")

	resp, err := http.Get(px.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got bytes.Buffer
	br := bufio.NewReader(io.TeeReader(resp.Body, &got))
	for { // the endpoint event
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\n" {
			break
		}
	}
	if code, _ := clientDo(t, "POST", px.URL+"/message?sessionId=abc", initReq); code != http.StatusAccepted {
		t.Fatalf("POST /message: %d", code)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	px.Stop()

	entries, lines := harEntries(t, px.Cassette)
	want := []string{
		"GET /sse 200 legacy-sse 0 [1 3]",
		"POST /message?sessionId=abc 202 post-body 2 []",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Fatalf("entries (-want +got):\n%s", d)
	}
	if entries[0].Response.Content.Text != got.String() {
		t.Errorf("the rebuilt stream %q, the client got %q", entries[0].Response.Content.Text, got.String())
	}
	if entries[1].Request.PostData.Text != initReq {
		t.Errorf("POST body %q, want %q", entries[1].Request.PostData.Text, initReq)
	}
}
