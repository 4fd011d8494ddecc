package rerun_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func shipped(tb testing.TB, name string) *store.TapeSession {
	tb.Helper()
	tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", name))
	if err != nil {
		tb.Fatal(err)
	}
	return &tape.Sessions[0]
}

// sessionOf builds a recorded session: "> " lines are client frames, "< "
// lines server frames.
func sessionOf(lines ...string) *store.TapeSession {
	s := &store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, l := range lines {
		dir := store.C2S
		if strings.HasPrefix(l, "< ") {
			dir = store.S2C
		}
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: dir, Time: t0.Add(time.Duration(i) * time.Millisecond), Frame: []byte(l[2:])})
	}
	return s
}

func runOK(tb testing.TB, recorded *store.TapeSession, opts rerun.Options) *rerun.Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := rerun.Run(ctx, recorded, opts)
	if err != nil {
		tb.Fatalf("rerun: %v", err)
	}
	return res
}

// differences lists what CompareSessions finds other than Same.
func differences(a, b *store.TapeSession) []string {
	var out []string
	for _, d := range replay.CompareSessions(a, b) {
		if d.Op != replay.Same {
			out = append(out, d.String())
		}
	}
	return out
}

func count(s *store.TapeSession, dir store.Dir, method string) int {
	n := 0
	for _, m := range s.Messages {
		if m.Dir == dir && jsonrpc.Classify(m.Frame).Method == method {
			n++
		}
	}
	return n
}

// The shipped cassettes, recorded from the TypeScript SDK client and
// server-everything, rerun against server-everything: over the transport
// they were recorded on and across (a stdio recording over HTTP). The
// server answers every request as it did.
func TestRun_ServerEverything(t *testing.T) {
	endpoint, _ := url.Parse(peertest.EverythingHTTP(t, "streamableHttp") + "/mcp")
	legacy, _ := url.Parse(peertest.EverythingHTTP(t, "sse") + "/sse")
	tests := []struct {
		name      string
		cassette  string
		opts      rerun.Options
		transport string
	}{
		{"stdio recording, stdio server", "everything-stdio.db", rerun.Options{Command: peertest.ServerEverything(t, "stdio")}, store.TransportStdio},
		{"http recording, http server", "everything-http.db", rerun.Options{URL: endpoint}, store.TransportHTTP},
		{"http recording's HAR twin, http server", "everything-http.har", rerun.Options{URL: endpoint}, store.TransportHTTP},
		{"stdio recording, http server", "everything-stdio.db", rerun.Options{URL: endpoint}, store.TransportHTTP},
		{"stdio recording, legacy HTTP+SSE server", "everything-stdio.db", rerun.Options{URL: legacy}, store.TransportLegacySSE},
		// POST /sse/ gets a 404, and a GET of it the legacy event stream:
		// the rerun tells the transport as the spec tells clients to.
		{"stdio recording, legacy server at a URL that does not say so", "everything-stdio.db", rerun.Options{URL: legacy.JoinPath("/")}, store.TransportLegacySSE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recorded := shipped(t, tt.cassette)
			res := runOK(t, recorded, tt.opts)
			if d := differences(recorded, &res.Session); len(d) > 0 || len(res.Unanswered) > 0 {
				t.Errorf("differences %q, unanswered %q", d, res.Unanswered)
			}
			// What the server did on its own is in the new session too:
			// the long-running call's progress, sent with the recorded
			// token.
			if got, want := count(&res.Session, store.S2C, "notifications/progress"), count(recorded, store.S2C, "notifications/progress"); got != want || got == 0 {
				t.Errorf("%d progress notifications, the recording has %d", got, want)
			}
			if res.Session.Info.End == nil || res.Session.Info.Transport != tt.transport {
				t.Errorf("session info %+v", res.Session.Info)
			}
			accepted := 0
			for _, m := range res.Session.Messages {
				if (tt.opts.URL != nil) != (m.HTTP != nil) {
					t.Errorf("seq %d: HTTP metadata %+v over %s", m.Seq, m.HTTP, res.Session.Info.Transport)
					break
				}
				// The answer to a POST that carried no message is on the
				// message posted: 202 for notifications (legacy: every POST).
				k := jsonrpc.Classify(m.Frame).Kind
				if m.Dir == store.C2S && m.HTTP != nil && (k == jsonrpc.Notification || tt.transport == store.TransportLegacySSE) {
					if m.HTTP.Status != http.StatusAccepted {
						t.Errorf("seq %d %.50s: status %d, want 202 recorded", m.Seq, m.Frame, m.HTTP.Status)
					}
					accepted++
				}
			}
			if tt.opts.URL != nil && accepted == 0 {
				t.Errorf("no POST answered 202 in the rerun's session")
			}
		})
	}
}

// A server that answers differently now is seen: the go-sdk server's echo
// against a recording that says it answered otherwise, and a request it
// no longer knows.
func TestRun_FindsChangedAnswers(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"gosdkserver","version":"1.0.0"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}}`,
	)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	res := runOK(t, recorded, rerun.Options{Command: []string{server}})
	d := differences(recorded, &res.Session)
	if len(d) != 1 || !strings.Contains(d[0], `- result.content[0].text="hello"`) || !strings.Contains(d[0], `+ result.content[0].text="hi"`) {
		t.Errorf("differences:\n%s\nwant the echo answer only", strings.Join(d, "\n"))
	}
	if res.Session.Info.End == nil || res.Session.Info.End.Reason != store.EndEOF {
		t.Errorf("end %+v, want the server shut down by closing its stdin", res.Session.Info.End)
	}
}

// A server→client request gets the reply the recorded client gave:
// server-everything's get-roots-list asks the client for its roots, and
// lists what it got.
func TestRun_AnswersServerRequests(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///recorded/project","name":"recorded"}]}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-roots-list","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"whatever it said then"}]}}`,
	)
	endpoint, _ := url.Parse(peertest.EverythingHTTP(t, "streamableHttp") + "/mcp")
	for _, opts := range []rerun.Options{{Command: peertest.ServerEverything(t, "stdio")}, {URL: endpoint}} {
		res := runOK(t, recorded, opts)
		var answer string
		for _, m := range res.Session.Messages {
			if s := jsonrpc.Classify(m.Frame); m.Dir == store.S2C && s.Kind == jsonrpc.Response && s.ID == "1" {
				answer = string(m.Frame)
			}
		}
		if !strings.Contains(answer, "file:///recorded/project") {
			t.Errorf("%s: get-roots-list answered %s; want the recorded client's root", res.Session.Info.Transport, answer)
		}
		if count(&res.Session, store.S2C, "roots/list") == 0 {
			t.Errorf("%s: the server asked no roots/list:\n%v", res.Session.Info.Transport, res.Session.Messages)
		}
	}
}

// A request the recording has an answer to and the server never answers
// is reported after the timeout; an HTTP error without a JSON-RPC body is
// reported at once, with the status.
func TestRun_Unanswered(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hung"}}`,
	)
	t.Run("a silent server", func(t *testing.T) {
		start := time.Now()
		res := runOK(t, recorded, rerun.Options{Command: []string{"sh", "-c", "cat >/dev/null"}, Timeout: 200 * time.Millisecond, Grace: time.Second})
		// The wait is Timeout's, not the default 10 s: this counts waits,
		// not speed.
		if took := time.Since(start); took >= 5*time.Second {
			t.Errorf("took %s: the wait for the answer did not keep to Timeout", took)
		}
		if len(res.Unanswered) != 1 || res.Unanswered[0] != "tools/list (id 1): no answer within 200ms, though the recording has one" {
			t.Errorf("unanswered %q, want the tools/list only (the hung call was never answered)", res.Unanswered)
		}
		if got := count(&res.Session, store.C2S, "tools/call"); got != 1 {
			t.Errorf("the call after the unanswered list was sent %d times", got)
		}
	})
	t.Run("an HTTP error", func(t *testing.T) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "no MCP here", http.StatusNotFound)
		}))
		defer ts.Close()
		u, _ := url.Parse(ts.URL + "/mcp")
		res := runOK(t, recorded, rerun.Options{URL: u, Timeout: time.Minute})
		want := []string{"tools/list (id 1): HTTP 404: no MCP here", "tools/call (id 2): HTTP 404: no MCP here"}
		if strings.Join(res.Unanswered, "\n") != strings.Join(want, "\n") {
			t.Errorf("unanswered %q, want %q", res.Unanswered, want)
		}
		// The session keeps each refusal on the request refused, and its
		// body as a frame of its own, as mcpspy record keeps them.
		if n := len(res.Session.Messages); n != 4 {
			t.Errorf("the session holds %d messages, want the 2 requests and their refusals' bodies", n)
		}
		for i, m := range res.Session.Messages {
			switch {
			case i%2 == 0 && (m.Dir != store.C2S || m.HTTP == nil || m.HTTP.Status != http.StatusNotFound || m.Note != "refused without a message: no MCP here"):
				t.Errorf("seq %d %.40s: http %+v, note %q; want the 404 and how its body began", m.Seq, m.Frame, m.HTTP, m.Note)
			case i%2 == 1 && (m.Dir != store.S2C || string(m.Frame) != "no MCP here\n" || m.HTTP.Status != http.StatusNotFound || m.HTTP.Stream != store.StreamJSON):
				t.Errorf("seq %d %q: http %+v; want the refusal's body", m.Seq, m.Frame, m.HTTP)
			}
		}
	})
}

func TestRun_Errors(t *testing.T) {
	recorded := sessionOf(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`)
	u, _ := url.Parse("http://127.0.0.1:1/mcp")
	for _, tt := range []struct {
		name string
		opts rerun.Options
		want string
	}{
		{"no such command", rerun.Options{Command: []string{"/no/such/server"}}, `server command "/no/such/server"`},
		{"no server", rerun.Options{}, "no server"},
		{"both", rerun.Options{Command: []string{"true"}, URL: u}, "not both"},
		{"nothing listening", rerun.Options{URL: u}, "connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rerun.Run(context.Background(), recorded, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q in it", err, tt.want)
			}
		})
	}
}

// A server may speak first, before the rerun has sent anything: its ping
// is answered all the same.
func TestRun_ServerSpeaksFirst(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)
	// Asks a ping at once, then echoes a canned answer to each line.
	script := `echo '{"jsonrpc":"2.0","id":"first","method":"ping"}'; while read -r line; do case "$line" in *tools/list*) echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}';; esac; done`
	res := runOK(t, recorded, rerun.Options{Command: []string{"sh", "-c", script}, Timeout: 5 * time.Second, Grace: time.Second})
	var replied bool
	for _, m := range res.Session.Messages {
		if s := jsonrpc.Classify(m.Frame); m.Dir == store.C2S && s.Kind == jsonrpc.Response && s.ID == `"first"` {
			replied = string(m.Frame) == `{"jsonrpc":"2.0","id":"first","result":{}}`
		}
	}
	if !replied || len(res.Unanswered) > 0 {
		t.Errorf("ping answered %v, unanswered %q; session:\n%v", replied, res.Unanswered, res.Session.Messages)
	}
}

// A legacy SSE URL whose stream does not start, or names no endpoint, is
// an error naming it.
func TestRun_LegacyErrors(t *testing.T) {
	recorded := sessionOf(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // open, and mute
	}))
	defer silent.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	for _, tt := range []struct {
		name, url, want string
	}{
		{"no endpoint event", silent.URL + "/sse", "no endpoint event within 200ms"},
		{"no stream", missing.URL + "/sse", "404 Not Found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := url.Parse(tt.url)
			_, err := rerun.Run(context.Background(), recorded, rerun.Options{URL: u, Timeout: 200 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q in it", err, tt.want)
			}
		})
	}
}

// Over WebSocket, against go-sdk's server (one message per text frame,
// subprotocol mcp): the echo comes back, and a rerun of the rerun's own
// session finds every answer the same.
func TestRun_WebSocket(t *testing.T) {
	ts := httptest.NewServer(gosdk.WebSocketHandler(gosdk.NewServer("ws-go"), nil))
	defer ts.Close()
	u, _ := url.Parse("ws" + strings.TrimPrefix(ts.URL, "http") + "/mcp")
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over ws"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	first := runOK(t, recorded, rerun.Options{URL: u})
	var echoed bool
	for _, m := range first.Session.Messages {
		if s := jsonrpc.Classify(m.Frame); m.Dir == store.S2C && s.ID == "2" {
			echoed = strings.Contains(string(m.Frame), `"text":"over ws"`)
		}
		if m.HTTP == nil || m.HTTP.Stream != "ws" {
			t.Errorf("seq %d: metadata %+v", m.Seq, m.HTTP)
		}
	}
	if !echoed || first.Session.Info.Transport != store.TransportWebSocket {
		t.Fatalf("echo %v, transport %q; session:\n%v", echoed, first.Session.Info.Transport, first.Session.Messages)
	}
	if end := first.Session.Info.End; end == nil || end.CloseCode != 1000 {
		t.Errorf("end %+v, want a normal closure", end)
	}
	again := runOK(t, &first.Session, rerun.Options{URL: u})
	if d := differences(&first.Session, &again.Session); len(d) > 0 || len(again.Unanswered) > 0 {
		t.Errorf("differences %q, unanswered %q", d, again.Unanswered)
	}
}

// A server that no longer asks what the recorded one asked is waited for
// once, not before every frame after the question.
func TestRun_FewerServerRequests(t *testing.T) {
	recorded := sessionOf(
		`< {"jsonrpc":"2.0","id":"q","method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":"q","result":{"roots":[]}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`,
	)
	// Answers every tools/list, asks nothing.
	script := `while read -r line; do id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"tools\":[]}}"; done`
	start := time.Now()
	res := runOK(t, recorded, rerun.Options{Command: []string{"sh", "-c", script}, Timeout: time.Second, Grace: time.Second})
	if d := differences(recorded, &res.Session); len(d) > 0 || len(res.Unanswered) > 0 {
		t.Errorf("differences %q, unanswered %q", d, res.Unanswered)
	}
	// This counts waits, not speed: one wait takes the 1 s timeout, one
	// before each of the three calls would take 3 s; the rest is a shell
	// answering three lines.
	if waited := time.Since(start); waited >= 2500*time.Millisecond {
		t.Errorf("took %s: the missing roots/list was waited for more than once", waited)
	}
}

// A 2026-07-28 recording (no handshake, the version in each request's
// _meta) reruns against go-sdk's stateless server, which checks that the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers agree with the
// body.
func TestRun_Stateless(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("stateless-go") }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(h)
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"stateless"},`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stateless"}],"resultType":"complete"}}`,
	)
	res := runOK(t, recorded, rerun.Options{URL: u})
	if d := differences(recorded, &res.Session); len(d) > 0 || len(res.Unanswered) > 0 {
		t.Errorf("differences %q, unanswered %q; session:", d, res.Unanswered)
		for _, m := range res.Session.Messages {
			t.Logf("%s %d %s", m.Dir, m.HTTP.Status, m.Frame)
		}
	}
}

// A server URL with a credential in its query (?api_key=…) is kept as a
// recording keeps it: the rerun's session, which mcpspy rerun -o writes
// to a cassette, names neither the upstream nor any request path with the
// secret in it, over each HTTP transport. The request still reaches the
// server with it.
func TestRun_HidesURLSecrets(t *testing.T) {
	newServer := func(*http.Request) *mcp.Server { return gosdk.NewServer("secret-go") }
	var (
		mu   sync.Mutex
		seen []string // the api_key of each request the servers got
	)
	keys := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.URL.Query().Get("api_key"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	streamable := httptest.NewServer(keys(mcp.NewStreamableHTTPHandler(newServer, nil)))
	defer streamable.Close()
	legacy := httptest.NewServer(keys(mcp.NewSSEHandler(newServer, nil)))
	defer legacy.Close()
	ws := httptest.NewServer(keys(gosdk.WebSocketHandler(newServer(nil), nil)))
	defer ws.Close()
	const query = "?api_key=s3cret&keep=1"
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
	)
	for _, tt := range []struct{ name, url string }{
		{"streamable HTTP", streamable.URL + "/mcp" + query},
		{"legacy HTTP+SSE", legacy.URL + "/sse" + query},
		{"WebSocket", "ws" + strings.TrimPrefix(ws.URL, "http") + "/mcp" + query},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			u, _ := url.Parse(tt.url)
			res := runOK(t, recorded, rerun.Options{URL: u})
			if len(res.Unanswered) > 0 || count(&res.Session, store.S2C, "") == 0 {
				t.Fatalf("unanswered %q; session %v", res.Unanswered, res.Session.Messages)
			}
			mu.Lock()
			if len(seen) == 0 || seen[0] != "s3cret" {
				t.Errorf("the server got api_key %q, want the real one", seen)
			}
			mu.Unlock()
			if up := res.Session.Info.Upstream; strings.Contains(up, "s3cret") || !strings.Contains(up, "keep=1") {
				t.Errorf("upstream %q", up)
			}
			for _, m := range res.Session.Messages {
				if m.HTTP == nil || strings.Contains(m.HTTP.Path, "s3cret") {
					t.Errorf("seq %d: HTTP metadata %+v", m.Seq, m.HTTP)
				}
			}
		})
	}
}

// The recorded client frames go out byte for byte, in recorded order: a
// frame spaced, ordered and escaped as no encoder would write it reaches
// go-sdk's server as it was recorded, never re-encoded.
func TestRun_SendsFramesAsRecorded(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"method": "notifications/initialized", "jsonrpc": "2.0"}`,
		`> { "params" : { "arguments" : { "text" : "caf\u00e9" }, "name" : "echo" }, "id" : 2, "method" : "tools/call", "jsonrpc" : "2.0" }`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"café"}]}}`,
		`> {"jsonrpc":"2.0","method":"tools/call","id":3,"params":{"name":"add","arguments":{"b":3,"a":2}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}}`,
	)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	res := runOK(t, recorded, rerun.Options{Command: []string{server}})
	var want, got []string
	for _, m := range recorded.Messages {
		if m.Dir == store.C2S {
			want = append(want, string(m.Frame))
		}
	}
	for _, m := range res.Session.Messages {
		if m.Dir == store.C2S {
			got = append(got, string(m.Frame))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nrecorded:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The calls are answered as recorded (the handshake's answer is
	// abridged in the recording).
	for _, d := range differences(recorded, &res.Session) {
		if !strings.HasPrefix(d, "~ initialize ") {
			t.Errorf("difference %s", d)
		}
	}
	if len(res.Unanswered) > 0 {
		t.Errorf("unanswered %q", res.Unanswered)
	}
}

// Where the recording shows the client replying to the server's own
// request before its next frame, the rerun replies first too: a server
// that asks for the roots late (after 300 ms) still reads the reply
// before the call that follows it in the recording.
func TestRun_WaitsForServerRequests(t *testing.T) {
	recorded := sessionOf(
		`< {"jsonrpc":"2.0","id":"q","method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":"q","result":{"roots":[{"uri":"file:///recorded"}]}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)
	script := `sleep 0.3; echo '{"jsonrpc":"2.0","id":"live-q","method":"roots/list"}'; while read -r line; do case "$line" in *tools/list*) echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}';; esac; done`
	res := runOK(t, recorded, rerun.Options{Command: []string{"sh", "-c", script}, Timeout: 5 * time.Second, Grace: time.Second})
	var sent []string
	for _, m := range res.Session.Messages {
		if m.Dir == store.C2S {
			sent = append(sent, string(m.Frame))
		}
	}
	want := []string{
		`{"jsonrpc":"2.0","id":"live-q","result":{"roots":[{"uri":"file:///recorded"}]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") || len(res.Unanswered) > 0 {
		t.Errorf("sent (unanswered %q):\n%s\nwant:\n%s", res.Unanswered, strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}

// A 2026-07-28 call that asked for input, recorded from another run of
// the server: the retry goes out with the requestState today's server
// gave, not the recorded one it would refuse (the go-sdk test server's
// confirm names its own process in the state), and every other byte of
// the recorded retry stays as it was.
func TestRun_RetriesWithTheLiveRequestState(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("mrtr-go") }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(h)
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	const old = `"step=1;boot=yesterday"`
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{},"requestState":` + old + `,"inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},` + meta + `}}`
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{},`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":null,"requestState":`+old+`,"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}}`,
		`> `+retry,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello Ada"}],"resultType":"complete"}}`,
	)
	res := runOK(t, recorded, rerun.Options{URL: u})
	var sent, answer []byte
	var live []byte
	for _, m := range res.Session.Messages {
		switch sum := jsonrpc.Classify(m.Frame); {
		case m.Dir == store.C2S && sum.ID == "2":
			sent = m.Frame
		case m.Dir == store.S2C && sum.ID == "2":
			answer = m.Frame
		case m.Dir == store.S2C && sum.ID == "1" && sum.InputRequired:
			live = m.Frame
		}
	}
	if live == nil || answer == nil {
		t.Fatalf("no input_required answer or no answer to the retry; unanswered %q", res.Unanswered)
	}
	var state string
	if i := strings.Index(string(live), `"requestState":`); i >= 0 {
		state = string(live[i+len(`"requestState":`):])
		state = state[:strings.IndexByte(state[1:], '"')+2]
	}
	if state == "" || state == old {
		t.Fatalf("the live server gave state %s; want one of its own: %s", state, live)
	}
	if want := strings.Replace(retry, old, state, 1); string(sent) != want {
		t.Errorf("retry sent\n%s\nwant the recorded one with the live state\n%s", sent, want)
	}
	if !strings.Contains(string(answer), `"text":"hello Ada"`) {
		t.Errorf("the retry got %s", answer)
	}
	// The state is the server's own: the comparison leaves it out, in the
	// answer that gave it and in the retry that echoes it.
	if d := differences(recorded, &res.Session); len(d) > 0 {
		t.Errorf("differences %q", d)
	}
}

// A server that goes away partway is an error naming how it ended,
// returned with what the rerun did until then: the answers it got, and
// the requests it got none to.
func TestRun_ServerGoesAway(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`,
	)
	// It answers initialize, reads the next request, and goes.
	const answer = `read l; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read l; `
	tests := []struct {
		name, script, want string
	}{
		{"exits", answer + "exit 3", "send tools/list (id 3): the server exited with status 3"},
		{"killed", answer + "kill -KILL $$", "send tools/list (id 3): the server was stopped by a signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A timeout no run here comes near: a server that went away
			// is not waited for.
			res, err := rerun.Run(context.Background(), recorded, rerun.Options{Command: []string{"sh", "-c", tt.script}, Timeout: 20 * time.Second, Grace: time.Second})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if res == nil {
				t.Fatal("no result")
			}
			want := []string{
				"tools/list (id 2): never answered: the server went away first",
				"tools/list (id 3): never answered: not sent, the rerun stopped first",
			}
			if !slices.Equal(res.Unanswered, want) {
				t.Errorf("unanswered:\n%s\nwant:\n%s", strings.Join(res.Unanswered, "\n"), strings.Join(want, "\n"))
			}
			if count(&res.Session, store.S2C, "") != 1 || res.Session.Info.End == nil {
				t.Errorf("session %+v, %d frames from the server; want its answer to initialize, and its end", res.Session.Info, count(&res.Session, store.S2C, ""))
			}
		})
	}
}
