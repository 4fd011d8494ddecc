package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// Frames the shell must not read anything into: single and double
// quotes, $ and backticks, a JSON-escaped line break, and non-ASCII.
const (
	trickyFrame = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"it's \"$HOME\" ` + "`id`" + ` $(id) \\ line\nbreak ünï 🎉 '' end'"}}}`
	// trickyQuoted is trickyFrame as shellword.Quote writes it.
	trickyQuoted = `'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"it'\''s \"$HOME\" ` + "`id`" + ` $(id) \\ line\nbreak ünï 🎉 '\'''\'' end'\''"}}}'`
	initFrame    = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initedFrame  = `{"method":"notifications/initialized","jsonrpc":"2.0"}`
	listFrame    = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	httpPrefix   = `curl -sS -N -X POST 'http://127.0.0.1:3001/mcp' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'`
)

func httpMsg(dir store.Dir, frame, path string, h http.Header) *store.Message {
	return &store.Message{Session: "s1", Seq: 4, Dir: dir, Frame: []byte(frame),
		HTTP: &store.HTTPMeta{Method: http.MethodPost, Path: path, RequestHeader: h, Stream: "post-body"}}
}

func stdioMsg(dir store.Dir, frame string) *store.Message {
	return &store.Message{Session: "s1", Seq: 4, Dir: dir, Frame: []byte(frame)}
}

var (
	httpInfo  = store.SessionInfo{ID: "s1", Transport: store.TransportHTTP, Upstream: "http://127.0.0.1:3001/mcp"}
	stdioInfo = store.SessionInfo{ID: "s1", Transport: store.TransportStdio, Upstream: "npx -y @modelcontextprotocol/server-everything stdio",
		Handshake: store.Handshake{Method: "initialize", ProtocolVersion: "2025-11-25"}}
)

func withInfo(info store.SessionInfo, change func(*store.SessionInfo)) store.SessionInfo {
	change(&info)
	return info
}

func TestResend_Command(t *testing.T) {
	tests := []struct {
		name string
		res  Resend
		want string
	}{
		{
			name: "streamable HTTP keeps the headers that matter, sorted, and the path and query",
			res: Resend{Info: httpInfo, Msg: httpMsg(store.C2S, listFrame, "/mcp?debug=1&x=a%20b", http.Header{
				"Accept": {"application/json, text/event-stream"}, "Accept-Encoding": {"gzip"}, "Accept-Language": {"*"},
				"Connection": {"keep-alive"}, "Content-Length": {"46"}, "Content-Type": {"application/json"}, "Host": {"x"},
				"User-Agent": {"node"}, "Sec-Fetch-Mode": {"cors"}, "Content-Encoding": {"gzip"},
				"Mcp-Session-Id": {"abc-123"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"},
				"Mcp-Name": {"echo"}, "Mcp-Param-City": {"Zürich"}, "Authorization": {"Bearer tok"}, "X-Two": {"one", "two"},
				"X-Empty": {""},
			})},
			want: `curl -sS -N -X POST 'http://127.0.0.1:3001/mcp?debug=1&x=a%20b' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'` +
				` -H 'Authorization: Bearer tok' -H 'Mcp-Method: tools/list' -H 'Mcp-Name: echo' -H 'Mcp-Param-City: Zürich' -H 'Mcp-Protocol-Version: 2026-07-28'` +
				` -H 'Mcp-Session-Id: abc-123' -H 'X-Empty;' -H 'X-Two: one' -H 'X-Two: two' --data-raw '` + listFrame + `'`,
		},
		{
			name: "quotes, dollars, backticks, escapes and unicode stay as they are",
			res:  Resend{Info: httpInfo, Msg: httpMsg(store.C2S, trickyFrame, "/mcp", nil)},
			want: httpPrefix + ` --data-raw ` + trickyQuoted,
		},
		{
			name: "a body with line breaks keeps them",
			res:  Resend{Info: httpInfo, Msg: httpMsg(store.C2S, "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"notifications/initialized\"\n}\n", "/mcp", nil)},
			want: httpPrefix + " --data-raw '{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"notifications/initialized\"\n}\n'",
		},
		{
			name: "redacted headers stay redacted and are named",
			res: Resend{Info: httpInfo, Msg: httpMsg(store.C2S, listFrame, "/mcp", http.Header{
				"Authorization": {"[redacted]"}, "Cookie": {"[redacted]"}, "Mcp-Session-Id": {"abc"},
			})},
			want: httpPrefix + ` -H 'Authorization: [redacted]' -H 'Cookie: [redacted]' -H 'Mcp-Session-Id: abc' --data-raw '` + listFrame + `'` +
				`  # fill in each [redacted] first: the Authorization header, the Cookie header`,
		},
		{
			name: "a redacted query turns curl's globbing off",
			res:  Resend{Info: httpInfo, Msg: httpMsg(store.C2S, listFrame, "/mcp?api_key=[redacted]", nil)},
			want: `curl -sS -N -g -X POST 'http://127.0.0.1:3001/mcp?api_key=[redacted]' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'` +
				` --data-raw '` + listFrame + `'  # fill in each [redacted] first: the URL`,
		},
		{
			name: "a redacted password in the upstream, and a value blanked in the frame",
			res: Resend{Info: withInfo(httpInfo, func(i *store.SessionInfo) { i.Upstream = "https://me:[redacted]@example.com:8443/base?x=1#frag" }),
				Msg: httpMsg(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"[redacted]"}}}`, "/base/mcp", nil)},
			want: `curl -sS -N -g -X POST 'https://me:[redacted]@example.com:8443/base/mcp' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'` +
				` --data-raw '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"[redacted]"}}}'` +
				`  # fill in each [redacted] first: the URL, the message`,
		},
		{
			name: "without HTTP metadata the upstream's own path and query",
			res:  Resend{Info: withInfo(httpInfo, func(i *store.SessionInfo) { i.Upstream = "http://127.0.0.1:3001/mcp?v=2#x" }), Msg: stdioMsg(store.C2S, listFrame)},
			want: `curl -sS -N -X POST 'http://127.0.0.1:3001/mcp?v=2' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data-raw '` + listFrame + `'`,
		},
		{
			name: "an upstream that is only a host posts to /",
			res:  Resend{Info: withInfo(httpInfo, func(i *store.SessionInfo) { i.Upstream = "http://127.0.0.1:3001" }), Msg: stdioMsg(store.C2S, listFrame)},
			want: `curl -sS -N -X POST 'http://127.0.0.1:3001/' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data-raw '` + listFrame + `'`,
		},
		{
			name: "legacy HTTP+SSE says where the answer goes",
			res: Resend{Info: withInfo(httpInfo, func(i *store.SessionInfo) {
				i.Transport = store.TransportLegacySSE
				i.Upstream = "http://127.0.0.1:3001/sse"
			}),
				Msg: httpMsg(store.C2S, listFrame, "/messages?sessionId=42", nil)},
			want: `curl -sS -N -X POST 'http://127.0.0.1:3001/messages?sessionId=42' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'` +
				` --data-raw '` + listFrame + `'  # legacy HTTP+SSE: the answer comes on the session's SSE stream, not in this response`,
		},
		{
			name: "stdio, handshake era: initialize and initialized first",
			res:  Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, trickyFrame), Initialize: []byte(initFrame), Initialized: []byte(initedFrame)},
			want: `printf '%s\n' '` + initFrame + `' '` + initedFrame + `' ` + trickyQuoted + ` | npx -y @modelcontextprotocol/server-everything stdio`,
		},
		{
			name: "stdio: a missing notifications/initialized is supplied",
			res:  Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, listFrame), Initialize: []byte(initFrame)},
			want: `printf '%s\n' '` + initFrame + `' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '` + listFrame + `' | npx -y @modelcontextprotocol/server-everything stdio`,
		},
		{
			name: "stdio: initialize goes alone",
			res:  Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, initFrame), Initialize: []byte(initFrame), Initialized: []byte(initedFrame)},
			want: `printf '%s\n' '` + initFrame + `' | npx -y @modelcontextprotocol/server-everything stdio`,
		},
		{
			name: "stdio: initialized after its initialize",
			res:  Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, initedFrame), Initialize: []byte(initFrame), Initialized: []byte(initedFrame)},
			want: `printf '%s\n' '` + initFrame + `' '` + initedFrame + `' | npx -y @modelcontextprotocol/server-everything stdio`,
		},
		{
			name: "stdio, 2026-07-28: the message alone",
			res: Resend{Info: withInfo(stdioInfo, func(i *store.SessionInfo) {
				i.Handshake = store.Handshake{Method: "server/discover", ProtocolVersion: "2026-07-28"}
			}),
				Msg: stdioMsg(store.C2S, listFrame)},
			want: `printf '%s\n' '` + listFrame + `' | npx -y @modelcontextprotocol/server-everything stdio`,
		},
		{
			name: "stdio: an initialize the cassette lacks is rebuilt from the session info",
			res: Resend{Info: withInfo(stdioInfo, func(i *store.SessionInfo) {
				i.Handshake.ClientInfo = json.RawMessage(`{ "name": "host", "version": "2" }`)
			}), Msg: stdioMsg(store.C2S, listFrame)},
			want: `printf '%s\n' '{"jsonrpc":"2.0","id":"mcpspy-init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"2"}}}'` +
				` '{"jsonrpc":"2.0","method":"notifications/initialized"}' '` + listFrame + `' | npx -y @modelcontextprotocol/server-everything stdio` +
				`  # initialize rebuilt from the session info: the cassette lacks the request`,
		},
		{
			name: "stdio: a redacted command line, and words the shell would read into are quoted",
			res: Resend{Info: withInfo(stdioInfo, func(i *store.SessionInfo) {
				i.Upstream = "server --api-key [redacted] --home $HOME it's *.json a,b=c:d@e%f+g"
				i.Handshake = store.Handshake{}
			}), Msg: stdioMsg(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"token":"[redacted]"}}}`)},
			want: `printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"token":"[redacted]"}}}'` +
				` | server --api-key '[redacted]' --home '$HOME' 'it'\''s' '*.json' a,b=c:d@e%f+g` +
				`  # fill in each [redacted] first: the server command line, the messages`,
		},
		{
			name: "stdio: a batch of calls, and a carriage return the client sent",
			res: Resend{Info: withInfo(stdioInfo, func(i *store.SessionInfo) { i.Handshake = store.Handshake{} }),
				Msg: stdioMsg(store.C2S, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]`+"\r")},
			want: `printf '%s\n' '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]` + "\r" + `' | npx -y @modelcontextprotocol/server-everything stdio`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := tt.res.Command()
			if err != nil {
				t.Fatalf("Command: %v", err)
			}
			if diff := cmp.Diff(tt.want, cmd.String()); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResend_CommandRefuses(t *testing.T) {
	tests := []struct {
		name     string
		res      Resend
		sentinel error
		want     string
	}{
		{"a server message", Resend{Info: httpInfo, Msg: httpMsg(store.S2C, listFrame, "/mcp", nil)},
			ErrNotSendable, "s1 #4 came from the server: only client requests and notifications can be sent again"},
		{"a client's response", Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, `{"jsonrpc":"2.0","id":2,"result":{"roots":[]}}`)},
			ErrNotSendable, "s1 #4 is the client's response to a server request: only client requests"},
		{"a client's error", Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}`)},
			ErrNotSendable, "s1 #4 is the client's error to a server request"},
		{"a malformed frame", Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, "not json")},
			ErrNotSendable, "s1 #4 is not a JSON-RPC message ("},
		{"a batch holding a response", Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"result":{}}]`)},
			ErrNotSendable, "s1 #4 is a batch holding responses"},
		{"WebSocket", Resend{Info: store.SessionInfo{ID: "s3", Transport: store.TransportWebSocket, Upstream: "ws://127.0.0.1:8080/"}, Msg: stdioMsg(store.C2S, listFrame)},
			ErrNoShellForm, "s1 #4 went over WebSocket, and no one-line shell command can send it; mcpspy rerun --session s3 CASSETTE --upstream ws://127.0.0.1:8080/ sends the session's client side again"},
		{"an unknown transport", Resend{Info: store.SessionInfo{Transport: "carrier-pigeon"}, Msg: stdioMsg(store.C2S, listFrame)},
			ErrNoShellForm, `s1 #4: its session's transport "carrier-pigeon" is not one mcpspy records`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := tt.res.Command()
			if !errors.Is(err, tt.sentinel) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Command() = %q, %v; want an error starting %q wrapping %v", cmd, err, tt.want, tt.sentinel)
			}
		})
	}
}

func TestResend_CommandBadInput(t *testing.T) {
	tests := []struct {
		name string
		res  Resend
		want string
	}{
		{"an HTTP session whose upstream is no URL", Resend{Info: withInfo(httpInfo, func(i *store.SessionInfo) { i.Upstream = "npx server" }), Msg: stdioMsg(store.C2S, listFrame)},
			`s1 #4: its session's upstream "npx server" is not an http(s) URL`},
		{"an HTTP upstream with no host", Resend{Info: withInfo(httpInfo, func(i *store.SessionInfo) { i.Upstream = "http:///mcp" }), Msg: stdioMsg(store.C2S, listFrame)},
			`s1 #4: its session's upstream "http:///mcp" names no host`},
		{"a stdio session without its command line", Resend{Info: withInfo(stdioInfo, func(i *store.SessionInfo) { i.Upstream = " " }), Msg: stdioMsg(store.C2S, listFrame)},
			"s1 #4: its session records no server command line"},
		{"a line break in a stdio frame", Resend{Info: stdioInfo, Msg: stdioMsg(store.C2S, "{\"jsonrpc\":\"2.0\",\n\"method\":\"ping\",\"id\":1}")},
			"s1 #4: a frame to send holds a line break, which a stdio server would read as the end of a message"},
		{"a NUL byte in a header", Resend{Info: httpInfo, Msg: httpMsg(store.C2S, listFrame, "/mcp", http.Header{"X-Bad": {"a\x00b"}})},
			"s1 #4 holds a NUL byte, which no shell argument can carry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := tt.res.Command()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Command() = %q, %v; want the error %q", cmd, err, tt.want)
			}
			if errors.Is(err, ErrNotSendable) || errors.Is(err, ErrNoShellForm) {
				t.Errorf("%v is not about the kind of message or its transport", err)
			}
		})
	}
}

// received is what the test server saw of one request.
type received struct {
	method, uri string
	header      http.Header
	body        []byte
}

// TestResend_CurlRoundTrip runs the curl commands through sh against a
// server that checks it got the recorded method, path, headers and body.
func TestResend_CurlRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed, and the commands under test are curl commands")
	}
	got := make(chan received, 8) // room for every request, so a failed subtest never blocks the server
	const answer = `{"jsonrpc":"2.0","id":7,"result":{}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.RequestURI, r.Header.Clone(), body}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	info := withInfo(httpInfo, func(i *store.SessionInfo) { i.Upstream = srv.URL + "/mcp" })
	tests := []struct {
		name, path, frame string
		header            http.Header
	}{
		{"quotes, dollars, backticks and unicode", "/mcp", trickyFrame,
			http.Header{"Mcp-Session-Id": {"it's-$x"}, "Mcp-Protocol-Version": {"2025-11-25"}, "Authorization": {"[redacted]"}, "User-Agent": {"node"}}},
		{"a body with raw line breaks", "/mcp?a=b%20c", "{\n \"jsonrpc\": \"2.0\",\n \"method\": \"notifications/initialized\"\n}\n",
			http.Header{"Mcp-Method": {"notifications/initialized"}, "X-Two": {"1", "2"}}},
		{"a redacted query", "/messages?sessionId=9&token=[redacted]", listFrame, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := Resend{Info: info, Msg: httpMsg(store.C2S, tt.frame, tt.path, tt.header)}.Command()
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("sh", "-c", cmd.String()).CombinedOutput()
			if err != nil {
				t.Fatalf("sh -c %q: %v\n%s", cmd, err, out)
			}
			if string(out) != answer {
				t.Errorf("curl printed %q, want the answer %q", out, answer)
			}
			r := <-got // the server has answered, so it has sent
			if r.method != http.MethodPost || r.uri != tt.path || !bytes.Equal(r.body, []byte(tt.frame)) {
				t.Errorf("server got %s %s %q\nwant POST %s %q", r.method, r.uri, r.body, tt.path, tt.frame)
			}
			want := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			for k, vs := range tt.header {
				if k != "User-Agent" {
					want[k] = vs
				}
			}
			for k, vs := range want {
				if diff := cmp.Diff(vs, r.header.Values(k)); diff != "" {
					t.Errorf("header %s (-want +got):\n%s", k, diff)
				}
			}
			if ua := r.header.Get("User-Agent"); !strings.HasPrefix(ua, "curl/") {
				t.Errorf("User-Agent %q: the recorded client's should be left out", ua)
			}
		})
	}
}

// TestResendEchoHelper is not a test: TestResend_StdioRoundTrip runs the
// test binary as its stdio server, which writes its stdin to stdout and
// its arguments after "--" to stderr, as JSON.
func TestResendEchoHelper(t *testing.T) {
	if os.Getenv("MCPTAPE_RESEND_ECHO") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	_ = json.NewEncoder(os.Stderr).Encode(args)
	_, _ = io.Copy(os.Stdout, os.Stdin)
	os.Exit(0)
}

// TestResend_StdioRoundTrip runs the stdio commands through sh with the
// echo helper as the server, and checks what it read, byte for byte, and
// that its arguments reached it as recorded.
func TestResend_StdioRoundTrip(t *testing.T) {
	bin := os.Args[0]
	if strings.ContainsAny(bin, " \t\n") {
		t.Skipf("the test binary's path %q has blanks, which a recorded command line cannot tell from argument breaks", bin)
	}
	args := []string{"$HOME", "`id`", "it's", "*", "a;b"}
	info := withInfo(stdioInfo, func(i *store.SessionInfo) {
		i.Upstream = bin + " -test.run=^TestResendEchoHelper$ -- " + strings.Join(args, " ")
	})
	era2026 := withInfo(info, func(i *store.SessionInfo) { i.Handshake = store.Handshake{Method: "server/discover"} })
	tests := []struct {
		name string
		res  Resend
		want string
	}{
		{"handshake era", Resend{Info: info, Msg: stdioMsg(store.C2S, trickyFrame), Initialize: []byte(initFrame), Initialized: []byte(initedFrame)},
			initFrame + "\n" + initedFrame + "\n" + trickyFrame + "\n"},
		{"2026-07-28", Resend{Info: era2026, Msg: stdioMsg(store.C2S, trickyFrame)}, trickyFrame + "\n"},
		{"a carriage return stays", Resend{Info: era2026, Msg: stdioMsg(store.C2S, listFrame+"\r")}, listFrame + "\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := tt.res.Command()
			if err != nil {
				t.Fatal(err)
			}
			sh := exec.Command("sh", "-c", cmd.String())
			sh.Env = append(os.Environ(), "MCPTAPE_RESEND_ECHO=1")
			var stdout, stderr bytes.Buffer
			sh.Stdout, sh.Stderr = &stdout, &stderr
			if err := sh.Run(); err != nil {
				t.Fatalf("sh -c %q: %v\n%s", cmd, err, stderr.String())
			}
			if diff := cmp.Diff(tt.want, stdout.String()); diff != "" {
				t.Errorf("the server read (-want +got):\n%s", diff)
			}
			var gotArgs []string
			if err := json.Unmarshal(stderr.Bytes(), &gotArgs); err != nil {
				t.Fatalf("helper's stderr %q: %v", stderr.String(), err)
			}
			if diff := cmp.Diff(args, gotArgs); diff != "" {
				t.Errorf("the server's arguments (-want +got):\n%s", diff)
			}
		})
	}
}

// rowIndex finds the stable index of a session's message.
func rowIndex(t *testing.T, m *Model, session string, seq uint64) int {
	t.Helper()
	for i := range m.Len() {
		if r, _ := m.ByIndex(i); r.Session == session && r.Seq == seq {
			return i
		}
	}
	t.Fatalf("no message %s #%d", session, seq)
	return -1
}

// TestModel_ResendCommand finds the session's handshake frames for a
// stdio message in the cassette itself.
func TestModel_ResendCommand(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession))
	f := func(i int) string { return "'" + sampleSession[i].json + "'" }
	tests := []struct {
		name    string
		seq     uint64
		want    string
		wantErr string
	}{
		{"a call after the handshake", 4, `printf '%s\n' ` + f(0) + " " + f(2) + " " + f(3) + " | server", ""},
		{"the initialize", 1, `printf '%s\n' ` + f(0) + " | server", ""},
		{"the initialized notification", 3, `printf '%s\n' ` + f(0) + " " + f(2) + " | server", ""},
		{"the client's response to roots/list", 8, "", "s1 #8 is the client's response to a server request: only client requests and notifications can be sent again"},
		{"a server message", 2, "", "s1 #2 came from the server: only client requests and notifications can be sent again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := m.ResendCommand(rowIndex(t, m, "s1", tt.seq), src)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrNotSendable) {
					t.Errorf("ResendCommand = %q, %v; want the error %q", cmd, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cmd.String()); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := m.ResendCommand(m.Len(), src); err == nil {
		t.Error("ResendCommand past the last message did not fail")
	}
}

// writeSessions records sessions with the given infos into a new
// cassette; HTTP sessions' client frames get a POST's metadata.
func writeSessions(tb testing.TB, infos []store.SessionInfo, sessions ...[]frame) string {
	tb.Helper()
	path := tb.TempDir() + "/sessions.db"
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	for i, frames := range sessions {
		info := infos[i]
		info.Start = t0.Add(time.Duration(i) * time.Second)
		s, err := w.NewSession(info)
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range frames {
			var meta *store.HTTPMeta
			if info.Transport == store.TransportHTTP && f.dir == store.C2S {
				meta = &store.HTTPMeta{Method: http.MethodPost, Path: "/mcp", RequestHeader: http.Header{"Mcp-Session-Id": {"sid"}}, Stream: "post-body"}
			}
			s.Append(f.dir, info.Start.Add(f.at), []byte(f.json), meta)
		}
		if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: info.Start.Add(time.Second)}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestModel_WriteTextResend prints a command per client request and
// notification the filter shows, across transports, and the reason for
// the one that has none.
func TestModel_WriteTextResend(t *testing.T) {
	short := []frame{
		{store.C2S, 0, listFrame},
		{store.S2C, time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
	}
	path := writeSessions(t, []store.SessionInfo{
		{Transport: store.TransportStdio, Upstream: "server --flag"},
		{Transport: store.TransportHTTP, Upstream: "http://127.0.0.1:3001/mcp"},
		{Transport: store.TransportWebSocket, Upstream: "ws://127.0.0.1:8080/"},
	}, sampleSession[:5], short, short)
	tests := []struct {
		name, filter, want string
		n                  int
	}{
		{"everything", "", `# s1:1 initialize
printf '%s\n' '` + sampleSession[0].json + `' | server --flag

# s1:3 notifications/initialized
printf '%s\n' '` + sampleSession[0].json + `' '` + sampleSession[2].json + `' | server --flag

# s1:4 tools/call echo
printf '%s\n' '` + sampleSession[0].json + `' '` + sampleSession[2].json + `' '` + sampleSession[3].json + `' | server --flag

# s1:5 tools/call slow-op
printf '%s\n' '` + sampleSession[0].json + `' '` + sampleSession[2].json + `' '` + sampleSession[4].json + `' | server --flag

# s2:1 tools/list
` + httpPrefix + ` -H 'Mcp-Session-Id: sid' --data-raw '` + listFrame + `'

# s3:1 tools/list
# s3 #1 went over WebSocket, and no one-line shell command can send it; mcpspy rerun --session s3 CASSETTE --upstream ws://127.0.0.1:8080/ sends the session's client side again
`, 6},
		{"a filter", "tool:echo", `# s1:4 tools/call echo
printf '%s\n' '` + sampleSession[0].json + `' '` + sampleSession[2].json + `' '` + sampleSession[3].json + `' | server --flag
`, 1},
		{"only server messages", "dir:s2c", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src := openModel(t, path)
			filtered(t, m, src, tt.filter)
			var b strings.Builder
			n, err := m.WriteText(context.Background(), &b, src, TextOptions{Resend: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("WriteText (-want +got):\n%s", diff)
			}
			if n != tt.n {
				t.Errorf("WriteText counted %d commands, want %d", n, tt.n)
			}
		})
	}
}
