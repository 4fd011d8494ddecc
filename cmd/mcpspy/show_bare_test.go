package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// bareJSONL is a Streamable HTTP session whose GET was refused with 405
// between its initialize and its ping, and whose DELETE ended it: two
// HTTP exchanges that carried no message, kept in the session's info.
const bareJSONL = `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-21T10:00:00Z","http_session_id":"a","bare":[{"time":"2026-11-21T10:00:00.002Z","http":{"method":"GET","path":"/mcp","status":405},"note":"refused without a message: no stream"},{"time":"2026-11-21T10:00:00.009Z","http":{"method":"DELETE","path":"/mcp","status":200}}]}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},"http":{"method":"POST","path":"/mcp","stream":"post-body"}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}},"http":{"method":"POST","path":"/mcp","status":200,"stream":"json"}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"method":"ping"},"http":{"method":"POST","path":"/mcp","stream":"post-body"}}
{"session":"s1","seq":4,"dir":"s2c","time":"2026-11-21T10:00:00.004000000Z","message":{"jsonrpc":"2.0","id":2,"result":{}},"http":{"method":"POST","path":"/mcp","status":200,"stream":"json"}}
`

// show --http prints the HTTP exchanges that carried no message (which
// the inspector shows in its session pane) on lines of their own, in
// time order among the messages; not when a filter picks messages, which
// such an exchange is not.
func TestMcpspy_ShowHTTPBareExchanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bare.jsonl")
	if err := os.WriteFile(path, []byte(bareJSONL), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		get    = "http: s1: no message: GET /mcp → 405 · at "
		getEnd = " · refused without a message: no stream"
		del    = "http: s1: no message: DELETE /mcp → 200 · at "
	)
	code, out, stderr := runCaptured("show", "--http", path)
	if code != 0 {
		t.Fatalf("show --http: %d %s", code, stderr)
	}
	var kinds []string // what each unindented line is
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, get) && strings.HasSuffix(l, getEnd):
			kinds = append(kinds, "GET")
		case strings.HasPrefix(l, del):
			kinds = append(kinds, "DELETE")
		case strings.HasPrefix(l, "http: "):
			t.Errorf("an unexpected line %q", l)
		case strings.Contains(l, " initialize"), strings.Contains(l, " ping"):
			kinds = append(kinds, strings.Fields(l)[len(strings.Fields(l))-1])
		}
	}
	want := "initialize initialize GET ping ping DELETE"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("lines in the order %q; want %q:\n%s", got, want, out)
	}
	for _, args := range [][]string{{"show", "--http", "--filter", "method:ping", path}, {"show", path}} {
		if code, out, _ := runCaptured(args...); code != 0 || strings.Contains(out, "no message") {
			t.Errorf("%q: exit %d; want no bare exchange:\n%s", args, code, out)
		}
	}
}

// show --follow --http prints the HTTP exchanges without a message that
// a recorder adds while it runs, each before the line of the first
// message after it.
func TestMcpspy_ShowFollowHTTPBareExchanges(t *testing.T) {
	prev := showAmendGrace
	showAmendGrace = time.Hour // what comes after decides, not the clock
	t.Cleanup(func() { showAmendGrace = prev })
	db, w := liveCassette(t)
	s := httpSession(t, w)
	bare := func(method string, status int) {
		s.Update(func(info *store.SessionInfo) {
			info.AddBare(store.BareExchange{Time: time.Now(), HTTP: store.HTTPMeta{Method: method, Path: "/mcp", Status: status}})
		})
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	sent := func(frame string, meta *store.HTTPMeta) {
		s.Append(store.C2S, time.Now(), []byte(frame), meta)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	sent(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, postMeta(http.StatusAccepted))
	show := startShow(t, "--follow", "--http", db)
	show.wait(t, "notifications/initialized", 1)
	bare(http.MethodGet, http.StatusMethodNotAllowed)
	sent(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, postMeta(http.StatusAccepted))
	show.wait(t, "notifications/roots/list_changed", 1)
	bare(http.MethodDelete, http.StatusOK)
	// The poll that reads this message reads the DELETE, stored before it.
	sent(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`, postMeta(http.StatusAccepted))
	show.wait(t, "notifications/cancelled", 1)
	out := show.stop(t)
	inOrder(t, out, []string{"notifications/initialized", "http: s1: no message: GET /mcp → 405", "notifications/roots/list_changed",
		"http: s1: no message: DELETE /mcp → 200", "notifications/cancelled"})
	if n := strings.Count(out, "no message"); n != 2 {
		t.Errorf("%d exchanges without a message printed; want each once:\n%s", n, out)
	}
}
