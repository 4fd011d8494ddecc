package replay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// habitTape is a Streamable HTTP recording of a server with sessions
// whose GETs and DELETEs got the given statuses (0: none recorded).
func habitTape(tb testing.TB, get, del int) *store.Tape {
	tb.Helper()
	tape := tapeOf(tb,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	info := &tape.Sessions[0].Info
	info.Transport, info.HTTPSessionID = store.TransportHTTP, "rec-1"
	info.Handshake = store.Handshake{Method: "initialize", ProtocolVersion: "2025-06-18", ServerInfo: json.RawMessage(`{"name":"s","version":"1"}`)}
	sent := http.Header{"Mcp-Session-Id": {"rec-1"}, "Mcp-Protocol-Version": {"2025-06-18"}}
	for _, b := range []store.HTTPMeta{{Method: http.MethodGet, Status: get}, {Method: http.MethodDelete, Status: del}} {
		if b.Status != 0 {
			b.RequestHeader = sent
			info.AddBare(store.BareExchange{HTTP: b})
		}
	}
	return tape
}

// A server with sessions may refuse GET (no stream of its own) and
// DELETE (clients may not end sessions) with 405; mcpmock does as the
// recording did, and serves the session on. What the recording does not
// show it refused, or showed it once served, it serves.
func TestHTTP_RecordedGetAndDeleteRefusals(t *testing.T) {
	tests := []struct {
		name               string
		get, del           int
		wantGet, wantDel   int
		wantAllow, stderrs string
	}{
		{"both refused", 405, 405, 405, 405, "POST", "GET gets 405"},
		{"GET refused", 405, 200, 405, 200, "POST, DELETE", "GET gets 405"},
		{"DELETE refused", 200, 405, 200, 405, "GET, POST", "DELETE gets 405"},
		{"none recorded", 0, 0, 200, 200, "", ""},
		{"refused for another reason", 409, 404, 200, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mocktest.New(t, []replay.Source{mustCassette(t, habitTape(t, tt.get, tt.del))})
			cl := initSession(t, srv.URL())
			stream := map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
			do := func(method string) *http.Response {
				resp := cl.Do(method, "", stream)
				t.Cleanup(func() { resp.Body.Close() })
				return resp
			}
			if resp := do(http.MethodGet); resp.StatusCode != tt.wantGet || resp.StatusCode == 405 && resp.Header.Get("Allow") != tt.wantAllow {
				t.Errorf("GET: %d, Allow %q; want %d (Allow %q)", resp.StatusCode, resp.Header.Get("Allow"), tt.wantGet, tt.wantAllow)
			}
			resp := do(http.MethodDelete)
			if resp.StatusCode != tt.wantDel || resp.StatusCode == 405 && resp.Header.Get("Allow") != tt.wantAllow {
				t.Errorf("DELETE: %d, Allow %q; want %d (Allow %q)", resp.StatusCode, resp.Header.Get("Allow"), tt.wantDel, tt.wantAllow)
			}
			if tt.wantDel == 405 { // the session goes on
				if body := bodyOf(t, cl.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"MCP-Protocol-Version": "2025-06-18"})); !strings.Contains(body, `"result":{}`) {
					t.Errorf("ping after a refused DELETE: %s", body)
				}
			}
			if w := srv.Warnings(); tt.stderrs == "" && w != "" || !strings.Contains(w, tt.stderrs) {
				t.Errorf("warnings %q, want %q", w, tt.stderrs)
			}
		})
	}
}

// mustCassette is NewCassette's, failing the test on error.
func mustCassette(tb testing.TB, tape *store.Tape) *replay.Cassette {
	tb.Helper()
	c, err := replay.NewCassette("habits.db", tape)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// A script's server.sessions decides whether there are sessions over
// Streamable HTTP, over what a recording layered under it shows.
func TestHTTP_ScriptSaysSessions(t *testing.T) {
	stateless := habitTape(t, 0, 0)
	stateless.Sessions[0].Info.HTTPSessionID = ""
	recording := mustCassette(t, stateless)
	tests := []struct {
		name        string
		sessions    string // server.sessions, "" for none
		withRecord  bool
		wantSession bool
	}{
		{"recording alone", "", true, false},
		{"script says true over it", "true", true, true},
		{"script says false", "false", false, false},
		{"script says nothing", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "server: {name: s, version: '1'"
			if tt.sessions != "" {
				src += ", sessions: " + tt.sessions
			}
			sc, err := script.Parse("fake.yaml", []byte(src+"}\n"))
			if err != nil {
				t.Fatal(err)
			}
			sources := []replay.Source{sc}
			if tt.withRecord {
				sources = append(sources, recording)
			}
			srv := mocktest.New(t, sources)
			cl := &peertest.RawHTTP{T: t, URL: srv.URL()}
			init := cl.Do("POST", initBody, nil)
			bodyOf(t, init)
			if got := init.Header.Get("Mcp-Session-Id") != ""; got != tt.wantSession {
				t.Fatalf("initialize gave session %q; want one: %v", init.Header.Get("Mcp-Session-Id"), tt.wantSession)
			}
			cl.SessionID = init.Header.Get("Mcp-Session-Id")
			get := cl.Do("GET", "", map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
			get.Body.Close()
			if refused := get.StatusCode == 405 && get.Header.Get("Allow") == "POST"; refused == tt.wantSession {
				t.Errorf("GET: %d, Allow %q; want 405 (Allow POST) only without sessions", get.StatusCode, get.Header.Get("Allow"))
			}
			// Without a session id, the next request of the connection
			// still belongs to its client's session.
			if body := bodyOf(t, cl.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"MCP-Protocol-Version": "2025-06-18"})); !strings.Contains(body, `"result":{}`) {
				t.Errorf("ping: %s", body)
			}
		})
	}
}

// mocktest.WithHTTPSessions (and so vcr.WithReplay) reaches the option:
// off serves a recording of a server with sessions without them; a mode
// that is none of auto, on and off is refused.
func TestMocktest_WithHTTPSessions(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)}, mocktest.WithHTTPSessions("off"))
	cl := &peertest.RawHTTP{T: t, URL: srv.URL()}
	init := cl.Do("POST", initBody, nil)
	if body := bodyOf(t, init); init.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, "serverInfo") {
		t.Errorf("initialize: session %q, %s; want an answer and no session", init.Header.Get("Mcp-Session-Id"), body)
	}
	if _, err := mocktest.Start([]replay.Source{cassetteOf(t, basicTape...)}, mocktest.WithHTTPSessions("sometimes")); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("an unknown mode: %v; want an error naming it", err)
	}
}

// A script's server.sessions is asked per request, so that a script
// reloaded (mcpmock serve --watch) with another one decides for the
// clients that come after.
func TestHTTP_ReloadedScriptSaysSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fake.yaml")
	write := func(text string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil { // later, even on a coarse clock
			t.Fatal(err)
		}
	}
	write("server: {name: s, version: '1'}\n", time.Now())
	sc, err := script.LoadReloadable(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := mocktest.New(t, []replay.Source{sc})
	sessionOf := func() string {
		t.Helper()
		init := (&peertest.RawHTTP{T: t, URL: srv.URL()}).Do("POST", initBody, nil)
		bodyOf(t, init)
		return init.Header.Get("Mcp-Session-Id")
	}
	if sessionOf() == "" {
		t.Fatal("before the reload: no session id; want one (the script says nothing)")
	}
	write("server: {name: s, version: '1', sessions: false}\n", time.Now().Add(time.Hour))
	if changed, err := sc.ReloadIfChanged(); !changed || err != nil {
		t.Fatalf("reload: changed %v, %v", changed, err)
	}
	if sid := sessionOf(); sid != "" {
		t.Errorf("after the reload: session id %q; want none (sessions: false)", sid)
	}
}

// sessionlessTape is a Streamable HTTP recording of a server without
// sessions whose client's GETs (each on a connection of its own, so in
// a session of its own) got the given statuses.
func sessionlessTape(tb testing.TB, gets ...int) *store.Tape {
	tb.Helper()
	tape := habitTape(tb, 0, 0)
	tape.Sessions[0].Info.HTTPSessionID = ""
	for _, status := range gets {
		var info store.SessionInfo
		info.Transport = store.TransportHTTP
		info.AddBare(store.BareExchange{HTTP: store.HTTPMeta{Method: http.MethodGet, Status: status, RequestHeader: http.Header{"Mcp-Protocol-Version": {"2025-06-18"}}}})
		tape.Sessions = append(tape.Sessions, store.TapeSession{Info: info})
	}
	return tape
}

// A server without sessions refuses GET (go-sdk's) or keeps it open with
// nothing on it (the TypeScript SDK's); mcpmock keeps it open only when
// every such GET recorded was, and only when the recordings decide that
// there are no sessions. The stream it keeps ends when the server closes.
func TestHTTP_QuietGetOfServerWithoutSessions(t *testing.T) {
	tests := []struct {
		name     string
		gets     []int
		opts     []mocktest.Option
		wantOpen bool
		stderr   string
	}{
		{"kept open", []int{200, 200}, nil, true, "GET gets an event stream that carries nothing"},
		{"refused", []int{405}, nil, false, "GET and DELETE get 405"},
		{"kept open and refused", []int{200, 405}, nil, false, "GET and DELETE get 405"},
		{"none recorded", nil, nil, false, "GET and DELETE get 405"},
		{"kept open, but the flag says no sessions", []int{200}, []mocktest.Option{mocktest.WithHTTPSessions("off")}, false, "GET and DELETE get 405"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mocktest.New(t, []replay.Source{mustCassette(t, sessionlessTape(t, tt.gets...))}, tt.opts...)
			cl := &peertest.RawHTTP{T: t, URL: srv.URL()}
			if init := cl.Do("POST", initBody, nil); init.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(bodyOf(t, init), "serverInfo") {
				t.Fatalf("initialize: session %q; want an answer and none", init.Header.Get("Mcp-Session-Id"))
			}
			get := cl.Do("GET", "", map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
			defer get.Body.Close()
			if w := srv.Warnings(); !strings.Contains(w, tt.stderr) {
				t.Errorf("warnings %q; want %q", w, tt.stderr)
			}
			if !tt.wantOpen {
				if get.StatusCode != http.StatusMethodNotAllowed || get.Header.Get("Allow") != "POST" {
					t.Errorf("GET: %d, Allow %q; want 405, Allow POST", get.StatusCode, get.Header.Get("Allow"))
				}
				return
			}
			if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("GET: %d %q; want 200 and an event stream", get.StatusCode, get.Header.Get("Content-Type"))
			}
			// The client's requests go on meanwhile.
			if body := bodyOf(t, cl.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"MCP-Protocol-Version": "2025-06-18"})); !strings.Contains(body, `"result":{}`) {
				t.Errorf("ping beside the open GET: %s", body)
			}
			read := make(chan []byte)
			go func() {
				b, _ := io.ReadAll(get.Body)
				read <- b
			}()
			closed := make(chan struct{})
			go func() { // Close waits for the stream's handler to end
				srv.Close()
				close(closed)
			}()
			select {
			case b := <-read:
				if len(b) != 0 {
					t.Errorf("the GET stream carried %q; want nothing", b)
				}
				<-closed
			case <-time.After(10 * time.Second):
				t.Fatal("the GET stream stayed open after the server closed")
			}
		})
	}
}

// answerHabitTape is a 2025-11-25 Streamable HTTP recording of a server
// with sessions whose answer to a ping, on an event stream, repeated the
// Mcp-Session-Id or not (echo), and began with a priming event or not
// (primed).
func answerHabitTape(tb testing.TB, echo, primed bool) *store.Tape {
	tb.Helper()
	tape := tapeOf(tb,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	s := &tape.Sessions[0]
	s.Info.Transport, s.Info.HTTPSessionID = store.TransportHTTP, "rec-1"
	s.Info.Handshake = store.Handshake{Method: "initialize", ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{"name":"s","version":"1"}`)}
	sent := http.Header{"Mcp-Session-Id": {"rec-1"}, "Mcp-Protocol-Version": {"2025-11-25"}}
	answered := http.Header{"Content-Type": {"text/event-stream"}}
	if echo {
		answered.Set("Mcp-Session-Id", "rec-1")
	}
	s.Messages[0].HTTP = &store.HTTPMeta{Method: http.MethodPost, Stream: store.StreamPostBody}
	s.Messages[1].HTTP = &store.HTTPMeta{Method: http.MethodPost, Status: 200, Stream: store.StreamJSON,
		ResponseHeader: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"rec-1"}}}
	s.Messages[2].HTTP = &store.HTTPMeta{Method: http.MethodPost, RequestHeader: sent, Stream: store.StreamPostBody}
	s.Messages[3].HTTP = &store.HTTPMeta{Method: http.MethodPost, Status: 200, RequestHeader: sent, ResponseHeader: answered, Stream: store.StreamPostSSE, StreamID: 1}
	if primed {
		s.Messages[3].HTTP.Priming = []string{"0"}
	}
	return tape
}

// Servers differ in two things the spec leaves open: whether answers
// after initialize repeat the Mcp-Session-Id (the TypeScript SDK's and
// go-sdk's do, mcp-go's does not) and whether a 2025-11-25 event stream
// begins with a priming event (servers without an event store send
// none). mcpmock does as the recording did, and says so.
func TestHTTP_RecordedSessionIDEchoAndPriming(t *testing.T) {
	tests := []struct {
		name           string
		echo, primed   bool
		wantStderrHas  []string
		wantStderrNone []string
	}{
		{"echoed and primed", true, true, nil, []string{"Mcp-Session-Id", "priming"}},
		{"neither", false, false, []string{"answers after initialize carry no Mcp-Session-Id", "event streams begin without a priming event"}, nil},
		{"echoed, not primed", true, false, []string{"without a priming event"}, []string{"Mcp-Session-Id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mocktest.New(t, []replay.Source{mustCassette(t, answerHabitTape(t, tt.echo, tt.primed))})
			cl := &peertest.RawHTTP{T: t, URL: srv.URL()}
			init := cl.Do("POST", strings.Replace(initBody, "2025-06-18", "2025-11-25", 1), nil)
			bodyOf(t, init)
			if cl.SessionID = init.Header.Get("Mcp-Session-Id"); cl.SessionID == "" {
				t.Fatal("initialize gave no session id")
			}
			v := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
			ping := cl.Do("POST", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, v)
			if body := bodyOf(t, ping); !strings.Contains(body, `"result":{}`) {
				t.Fatalf("ping: %s", body)
			}
			if got := ping.Header.Get("Mcp-Session-Id") != ""; got != tt.echo {
				t.Errorf("the ping's answer repeats the session id: %v; want %v", got, tt.echo)
			}
			get := cl.Do("GET", "", map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
			defer get.Body.Close()
			if got := get.Header.Get("Mcp-Session-Id") != ""; get.StatusCode != http.StatusOK || got != tt.echo {
				t.Errorf("GET: %d, repeats the session id: %v; want 200, %v", get.StatusCode, got, tt.echo)
			}
			read := make(chan string)
			go func() {
				b, _ := io.ReadAll(get.Body)
				read <- string(b)
			}()
			closed := make(chan struct{})
			go func() { // ends the stream; Close waits for its handler
				srv.Close()
				close(closed)
			}()
			select {
			case b := <-read:
				if primed := strings.Contains(b, "id:"); primed != tt.primed {
					t.Errorf("the GET stream carried %q; want a priming event: %v", b, tt.primed)
				}
				<-closed
			case <-time.After(10 * time.Second):
				t.Fatal("the GET stream stayed open after the server closed")
			}
			w := srv.Warnings()
			for _, s := range tt.wantStderrHas {
				if !strings.Contains(w, s) {
					t.Errorf("warnings %q; want %q", w, s)
				}
			}
			for _, s := range tt.wantStderrNone {
				if strings.Contains(w, s) {
					t.Errorf("warnings %q; want nothing of %q", w, s)
				}
			}
		})
	}
}
