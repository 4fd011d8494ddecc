package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// TestServe_HTTP runs "mcpmock serve --http" in process: it prints the
// listening line, serves, and writes its report when interrupted.
func TestServe_HTTP(t *testing.T) {
	db := writeTape(t)
	report := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http", ":0", "--report", report, db}, streams{In: strings.NewReader(""), Out: io.Discard, Err: pw})
		pw.Close()
	}()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url string
	select {
	case l := <-lines:
		var ok bool
		if url, ok = strings.CutPrefix(l, "mcpmock: listening on "); !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
			t.Fatalf("first stderr line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no listening line")
	}
	go func() { // keep stderr flowing
		for range lines {
		}
	}()
	post := func(body, sid string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// No initialize was recorded: the mock issues a session for it, and
	// introduces itself with what the tape shows (tools/list, tools/call).
	r := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, "")
	sid := r.Header.Get("Mcp-Session-Id")
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if sid == "" || !strings.Contains(string(b), `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}`) {
		t.Errorf("initialize: session %q, answer %s", sid, b)
	}
	r = post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sid)
	b, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if !strings.Contains(string(b), `"tools":[]`) {
		t.Errorf("tools/list: %s", b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	var rep replay.Report
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Matched != 2 || len(rep.Unmatched) != 0 || len(rep.Unused) != 1 {
		t.Errorf("report %s", data)
	}
}
