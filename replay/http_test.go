package replay_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

func bodyOf(t *testing.T, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sseEvents reads "data:" lines from an event stream as they come.
func sseEvents(r io.Reader) <-chan string {
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`

func TestHTTP_StreamableSession(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := &peertest.RawHTTP{T: t, URL: srv.URL()}

	if r := c.Do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("request without session: %d, want 400", r.StatusCode)
	}
	if r := c.Do("POST", `{"jsonrpc":`, nil); r.StatusCode != http.StatusBadRequest || !strings.Contains(bodyOf(t, r), "-32700") {
		t.Errorf("malformed body: want 400 with -32700")
	}
	if r := c.Do("POST", initBody, map[string]string{"Origin": "http://evil.example"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %d, want 403", r.StatusCode)
	}
	r := c.Do("POST", initBody, map[string]string{"Origin": "http://localhost:5173"})
	if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("initialize: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	c.SessionID = r.Header.Get("Mcp-Session-Id")
	if c.SessionID == "" || !strings.Contains(bodyOf(t, r), `"serverInfo"`) {
		t.Fatal("initialize: no Mcp-Session-Id or no result")
	}
	if r := c.Do("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); r.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %d, want 202", r.StatusCode)
	}
	bad := &peertest.RawHTTP{T: t, URL: c.URL, SessionID: "nope"}
	if r := bad.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d, want 404", r.StatusCode)
	}

	// The GET stream carries session-level messages; a second one is refused.
	get := c.Do("GET", "", map[string]string{"Accept": "text/event-stream", "Content-Type": ""})
	if get.StatusCode != 200 {
		t.Fatalf("GET: %d", get.StatusCode)
	}
	defer get.Body.Close()
	if r := c.Do("GET", "", map[string]string{"Accept": "text/event-stream"}); r.StatusCode != http.StatusConflict {
		t.Errorf("second GET: %d, want 409", r.StatusCode)
	}
	events := sseEvents(get.Body)
	if r := c.Do("POST", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grow"}}`, nil); !strings.Contains(bodyOf(t, r), "grew") {
		t.Error("grow: no answer")
	}
	select {
	case e := <-events:
		if !strings.Contains(e, "notifications/tools/list_changed") {
			t.Errorf("GET stream: %s, want list_changed", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed on the GET stream")
	}

	// Progress makes the answer an event stream; the ping before the reply
	// is answered with a POST of its own.
	r = c.Do("POST", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`, nil)
	if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("progress answer Content-Type %q", ct)
	}
	post := sseEvents(r.Body)
	var got []string
	for e := range post {
		got = append(got, e)
		if strings.Contains(e, `"method":"ping"`) {
			id := e[strings.Index(e, `"id":`)+5 : strings.Index(e, `,"method"`)]
			if a := c.Do("POST", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`, nil); a.StatusCode != http.StatusAccepted {
				t.Errorf("ping reply: %d", a.StatusCode)
			}
		}
	}
	if len(got) != 4 || !strings.Contains(got[0], `"progressToken":"p"`) || !strings.Contains(got[3], `"id":4`) {
		t.Errorf("progress stream: %q", got)
	}

	if r := c.Do("DELETE", "", nil); r.StatusCode != 200 {
		t.Errorf("DELETE: %d", r.StatusCode)
	}
	if r := c.Do("POST", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %d, want 404", r.StatusCode)
	}
}

func TestServer_MatchModes(t *testing.T) {
	tape := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"A"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"B"}]}}`,
	}
	call := func(name string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + name + `"}}`
	}
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	tests := []struct {
		mode  string
		sends []string
		wants []string // substrings of each answer
	}{
		{"default", []string{call("b"), call("a"), list}, []string{`"B"`, `"A"`, `"tools"`}},
		{"strict", []string{list, call("b")}, []string{`"tools"`, `next in recorded order: test.db s1#3 tools/call {\"name\":\"a\"}`}},
		{"strict", []string{list, call("a"), call("b"), call("b")}, []string{`"tools"`, `"A"`, `"B"`, `-32602`}},
		{"ignore-params=tools/call", []string{call("zzz"), call("b"), call("x")}, []string{`"A"`, `"B"`, `"B"`}},
		{"ignore-params", []string{`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"c"}}`}, []string{`"tools"`}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)}, mocktest.WithMatch(tt.mode))
			c := dial(t, s)
			for i, send := range tt.sends {
				if got := c.roundTrip(send); !strings.Contains(got, tt.wants[i]) {
					t.Errorf("%s → %s; want %s", send, got, tt.wants[i])
				}
			}
		})
	}
}

// What the HTTP transport refuses, and how: a browser Origin that is not
// loopback (an IP on the LAN, or "null" from a sandboxed page) gets 403;
// a method a path does not take gets 405 with the Allow header RFC 9110
// requires; a body past 64 MiB gets 413; a legacy POST for a session that
// does not exist gets 404.
func TestHTTP_Refusals(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	base := strings.TrimSuffix(srv.URL(), "/mcp")
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		wantStatus               int
		wantAllow                string
	}{
		{"origin on the LAN", "POST", "/mcp", initBody, map[string]string{"Origin": "http://192.168.1.9:5173"}, http.StatusForbidden, ""},
		{"origin unparseable", "POST", "/mcp", initBody, map[string]string{"Origin": "http://[::1"}, http.StatusForbidden, ""},
		{"origin null", "POST", "/mcp", initBody, map[string]string{"Origin": "null"}, http.StatusForbidden, ""},
		{"origin 127.0.0.1", "POST", "/mcp", initBody, map[string]string{"Origin": "http://127.0.0.1:5173"}, http.StatusOK, ""},
		{"origin ::1", "POST", "/mcp", initBody, map[string]string{"Origin": "http://[::1]:5173"}, http.StatusOK, ""},
		{"PUT /mcp", "PUT", "/mcp", initBody, nil, http.StatusMethodNotAllowed, "GET, POST, DELETE"},
		{"POST /sse", "POST", "/sse", initBody, nil, http.StatusMethodNotAllowed, "GET"},
		{"GET /message", "GET", "/message?sessionId=x", "", nil, http.StatusMethodNotAllowed, "POST"},
		{"legacy POST, no such session", "POST", "/message?sessionId=nope", initBody, nil, http.StatusNotFound, ""},
		{"body past 64 MiB", "POST", "/mcp", strings.Repeat(" ", 64<<20+1), nil, http.StatusRequestEntityTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &peertest.RawHTTP{T: t, URL: base + tt.path}
			r := c.Do(tt.method, tt.body, tt.hdr)
			body := bodyOf(t, r)
			if r.StatusCode != tt.wantStatus {
				t.Errorf("%s %s: %d %q, want %d", tt.method, tt.path, r.StatusCode, body, tt.wantStatus)
			}
			if got := r.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, got, tt.wantAllow)
			}
		})
	}
}
