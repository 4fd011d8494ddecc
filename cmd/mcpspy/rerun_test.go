package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
)

// mcpspy rerun against server-everything, the server the shipped cassette
// was recorded from: the same answers; then against a recording whose echo
// answer was edited: the difference, and exit 1 with --exit-code.
func TestMcpspy_Rerun(t *testing.T) {
	t.Parallel()
	everything := peertest.ServerEverything(t, "stdio")
	dir := t.TempDir()
	out := filepath.Join(dir, "rerun.db")
	code, stdout, stderr := runCaptured(append([]string{"rerun", "--exit-code", "-o", out, shippedCassette(t, "everything-stdio.db"), "--"}, everything...)...)
	if code != 0 || !strings.HasSuffix(stdout, "\n7 the same, 0 answered differently, 0 only in a, 0 only in b\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, ls, _ := runCaptured("ls", out); !strings.Contains(ls, "rerun of ") {
		t.Errorf("-o cassette lists as %q", ls)
	}

	// The same recording with the echo answer edited, as JSONL.
	plain, _ := runText(t, "export", shippedCassette(t, "everything-stdio.db"))
	edited := strings.Replace(string(plain), `"text":"Echo: hello from mcptape"`, `"text":"Echo: something else"`, 1)
	if edited == string(plain) {
		t.Fatal("the shipped cassette's echo answer was not found")
	}
	changed := filepath.Join(dir, "changed.jsonl")
	if err := os.WriteFile(changed, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCaptured(append([]string{"rerun", "--exit-code", changed, "--"}, everything...)...)
	want := "~ tools/call {\"arguments\":{\"message\":\"hello from mcptape\"},\"name\":\"echo\"}  (a#7 b#7)\n" +
		"    - result.content[0].text=\"Echo: something else\"\n" +
		"    + result.content[0].text=\"Echo: hello from mcptape\"\n" +
		"6 the same, 1 answered differently, 0 only in a, 0 only in b\n"
	if code != 1 || !strings.HasSuffix(stdout, want) {
		t.Errorf("exit %d, stdout:\n%s\nwant it to end:\n%s", code, stdout, want)
	}

	// --ignore text: the edited answer no longer counts.
	code, stdout, _ = runCaptured(append([]string{"rerun", "--exit-code", "--ignore", "text", changed, "--"}, everything...)...)
	if code != 0 || !strings.HasSuffix(stdout, "\n7 the same, 0 answered differently, 0 only in a, 0 only in b\n") {
		t.Errorf("--ignore text: exit %d, stdout:\n%s", code, stdout)
	}
	code, stdout, _ = runCaptured("diff", "--exit-code", "--ignore", "text", shippedCassette(t, "everything-stdio.db"), changed)
	if code != 0 || !strings.HasSuffix(stdout, "\n7 the same, 0 answered differently, 0 only in a, 0 only in b\n") {
		t.Errorf("diff --ignore text: exit %d, stdout:\n%s", code, stdout)
	}

	// Several SOURCEs, one run each, and a count; -o adds to the cassette
	// the first run wrote, each session under a new id.
	code, stdout, stderr = runCaptured(append([]string{"rerun", "--exit-code", "-o", out, shippedCassette(t, "everything-stdio.db"), changed, "--"}, everything...)...)
	if code != 1 || !strings.HasSuffix(stdout, "\n2 sessions rerun: 1 the same, 1 changed\n") || strings.Count(stdout, "--- a: ") != 2 {
		t.Errorf("two sources: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, ls, _ := runCaptured("ls", out); strings.Count(ls, "rerun of ") != 3 || !strings.Contains(ls, "s3") {
		t.Errorf("after a second -o the cassette lists:\n%s", ls)
	}
}

// The HTTP recording against server-everything over Streamable HTTP,
// flags after SOURCE. A credential in the URL's query reaches neither
// the output nor the -o cassette.
func TestMcpspy_RerunHTTP(t *testing.T) {
	base := peertest.EverythingHTTP(t, "streamableHttp")
	out := filepath.Join(t.TempDir(), "rerun.db")
	code, stdout, stderr := runCaptured("rerun", shippedCassette(t, "everything-http.db"), "--upstream", base+"/mcp?api_key=zz-secret", "--header", "X-Test: yes", "--all", "-o", out)
	if code != 0 || !strings.Contains(stdout, "= tools/list  (a#4 b#4)") || !strings.HasSuffix(stdout, "4 the same, 0 answered differently, 0 only in a, 0 only in b\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout+stderr, "zz-secret") || bytes.Contains(raw, []byte("zz-secret")) {
		t.Errorf("the api_key was printed or recorded; stdout:\n%s", stdout)
	}
}

func TestMcpspy_RerunErrors(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no server", []string{"rerun", db}, 2, "no server: give -- COMMAND"},
		{"both", []string{"rerun", db, "--upstream", "http://127.0.0.1:1/mcp", "--", "true"}, 2, "not both"},
		{"no source", []string{"rerun", "--", "true"}, 2, "no SOURCE cassette"},
		{"bad header", []string{"rerun", "--header", "nocolon", db, "--upstream", "http://127.0.0.1:1/mcp"}, 2, `--header "nocolon": want NAME: VALUE`},
		{"header for stdio", []string{"rerun", "--header", "A: b", db, "--", "true"}, 2, "--header is for --upstream URL"},
		{"bad upstream", []string{"rerun", db, "--upstream", "ftp://127.0.0.1:1/"}, 2, `unknown scheme "ftp" (want http, https, ws or wss)`},
		{"upstream without a scheme", []string{"rerun", db, "--upstream", "127.0.0.1:3001/mcp"}, 2, `rerun: --upstream "127.0.0.1:3001/mcp" has no scheme: did you mean http://127.0.0.1:3001/mcp`},
		{"timeout of 0", []string{"rerun", "--timeout", "0s", db, "--", "true"}, 2, "rerun: --timeout 0s: want a time above 0"},
		{"-o is a source", []string{"rerun", "-o", db, db, "--", "true"}, 2, "is a SOURCE"},
		{"missing command", []string{"rerun", db, "--", "/no/such/server"}, 1, `server command "/no/such/server"`},
		{"missing source", []string{"rerun", filepath.Join(t.TempDir(), "none.db"), "--", "true"}, 1, "none.db"},
		{"no such session", []string{"rerun", "--session", "s9", twoSessionCassette(t), "--", "true"}, 1, `session "s9"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCaptured(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// A recorded Mcp-Param-* value the recorder redacted is not sent; the
// note saying so reaches stderr, and go-sdk's server, which checks the
// header, answers differently than it did when recorded.
func TestMcpspy_RerunNotes(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "keys", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object","properties":{"api_key":{"type":"string","x-mcp-header":"Api-Key"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	export := `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup","arguments":{"api_key":"k-123"},` + meta + `}},"http":{"method":"POST","path":"/mcp","request_header":{"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"],"Mcp-Param-Api-Key":["[redacted]"],"Mcp-Protocol-Version":["2026-07-28"]},"stream":"post-body"}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"found"}]}},"http":{"method":"POST","path":"/mcp","status":200,"stream":"json"}}
`
	path := filepath.Join(t.TempDir(), "keys.jsonl")
	if err := os.WriteFile(path, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCaptured("rerun", "--exit-code", path, "--upstream", srv.URL+"/mcp")
	want := "mcpspy: rerun: " + path + " s1: note: tools/call (id 2): not sent: Mcp-Param-Api-Key, redacted in the recording"
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stdout, "-32020") {
		t.Errorf("exit %d (want 1: the answer changed), stdout:\n%s\nstderr:\n%s\nwant on stderr %q", code, stdout, stderr, want)
	}
}

// --timeout bounds the wait for an answer the recording got: a server
// that never answers is reported unanswered after it, not after the
// default 10 s.
func TestMcpspy_RerunTimeout(t *testing.T) {
	export := `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
`
	path := filepath.Join(t.TempDir(), "silent.jsonl")
	if err := os.WriteFile(path, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stdout, stderr := runCaptured("rerun", "--timeout", "200ms", path, "--", "sh", "-c", "cat >/dev/null")
	want := "mcpspy: rerun: " + path + " s1: tools/list (id 1): no answer within 200ms, though the recording has one"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant on stderr %q", code, stdout, stderr, want)
	}
	// This counts waits, not speed: the default would take 10 s.
	if took := time.Since(start); took >= 5*time.Second {
		t.Errorf("took %s: --timeout was not kept", took)
	}
}

// --session repeated reruns those sessions, as export takes them.
func TestMcpspy_RerunSessions(t *testing.T) {
	var export strings.Builder
	for _, id := range []string{"s1", "s2", "s3"} {
		export.WriteString(`{"session":"` + id + `","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}` + "\n")
		export.WriteString(`{"session":"` + id + `","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "three.jsonl")
	if err := os.WriteFile(path, []byte(export.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCaptured("rerun", "--session", "s3", "--session", "s1", path, "--", "sh", "-c", "cat >/dev/null")
	if code != 0 || !strings.Contains(stdout, "--- a: "+path+" s1 ") || !strings.Contains(stdout, "--- a: "+path+" s3 ") ||
		strings.Contains(stdout, " s2 ") || !strings.HasSuffix(stdout, "\n2 sessions rerun: 2 the same, 0 changed\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// An -o that cannot be a cassette fails before any server is started,
// not after the whole rerun, which it would lose.
func TestMcpspy_RerunBadOut(t *testing.T) {
	dir := t.TempDir()
	notCassette := notesFile(t, dir)
	tests := []struct {
		name, out, want string
	}{
		{"in a missing directory", filepath.Join(dir, "nodir", "o.db"), "create cassette " + filepath.Join(dir, "nodir", "o.db")},
		{"not a cassette", notCassette, notCassette + ": not an mcptape cassette"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := filepath.Join(t.TempDir(), "started")
			code, stdout, stderr := runCaptured("rerun", "--timeout", "200ms", "-o", tt.out, shippedCassette(t, "everything-stdio.db"), "--", "sh", "-c", "touch "+started+"; cat >/dev/null")
			if code != 1 || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1, %q and no output", code, stderr, stdout, tt.want)
			}
			if _, err := os.Stat(started); err == nil {
				t.Error("the server was started")
			}
		})
	}
}

// A server that goes away partway still gets its comparison, up to where
// it went, and its session kept in -o; the error, last, says how it
// ended, and the requests it never answered are named.
func TestMcpspy_RerunServerGoesAway(t *testing.T) {
	export := `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":1,"result":{}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.2Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}
{"session":"s1","seq":4,"dir":"s2c","time":"2026-11-21T10:00:00.3Z","message":{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}}
{"session":"s1","seq":5,"dir":"c2s","time":"2026-11-21T10:00:00.4Z","message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}}
{"session":"s1","seq":6,"dir":"s2c","time":"2026-11-21T10:00:00.5Z","message":{"jsonrpc":"2.0","id":3,"result":{"content":[]}}}
`
	dir := t.TempDir()
	path, out := filepath.Join(dir, "e.jsonl"), filepath.Join(dir, "g.db")
	if err := os.WriteFile(path, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	// It answers initialize, reads the next request, and exits.
	script := `read l; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read l; exit 3`
	// It is not waited for once it is gone, however long --timeout.
	code, stdout, stderr := runCaptured("rerun", "--timeout", "1m", "-o", out, path, "--", "sh", "-c", script)
	wantErr := "mcpspy: rerun: " + path + " s1: tools/list (id 2): never answered: the server went away first\n" +
		"mcpspy: rerun: " + path + " s1: tools/call (id 3): never answered: not sent, the rerun stopped first\n" +
		"mcpspy: rerun " + path + " s1: send tools/call (id 3): the server exited with status 3\n"
	if code != 1 || stderr != wantErr || !strings.HasSuffix(stdout, "\n1 the same, 1 answered differently, 1 only in a, 0 only in b\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and stderr:\n%s", code, stdout, stderr, wantErr)
	}
	if _, ls, _ := runCaptured("ls", out); !strings.Contains(ls, "rerun of "+path+" s1") || !strings.Contains(ls, "exit(3)") {
		t.Errorf("-o cassette lists as %q", ls)
	}
}

// A server that is gone before it answers anything gets the one line that
// says how it ended: no comparison listing every request as changed or
// missing, no line per request never answered.
func TestMcpspy_RerunServerAnswersNothing(t *testing.T) {
	path := shippedCassette(t, "everything-stdio.jsonl")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/mcp" // closed: nobody answers there
	ln.Close()
	tests := []struct {
		name       string
		server     []string
		wantSuffix string
	}{
		{"a command that exits", []string{"--", "sh", "-c", "exit 3"}, ": the server exited with status 3\n"},
		{"an upstream nobody listens at", []string{"--upstream", refused}, ": connect: connection refused\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCaptured(append([]string{"rerun", path}, tt.server...)...)
			prefix := "mcpspy: rerun " + path + " s1: send "
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, prefix) || !strings.HasSuffix(stderr, tt.wantSuffix) {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1, no stdout, one line %q…%q", code, stdout, stderr, prefix, tt.wantSuffix)
			}
		})
	}
}

// A sessionless 2026-07-28 client recorded over HTTP is a session per
// connection: rerun runs them together, so the list_changed the call in
// s2 causes reaches the listen stream s1 opened before it, and a server
// that no longer sends it is a change.
func TestMcpspy_RerunStatelessClient(t *testing.T) {
	srv := gosdk.NewServer("listen-go")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	const http200 = `"http":{"method":"POST","path":"/mcp","status":200,"request_header":{"Mcp-Protocol-Version":["2026-07-28"]}}`
	msg := func(session string, seq int, dir string, ms int, frame string) string {
		return fmt.Sprintf(`{"session":%q,"seq":%d,"dir":%q,"time":"2026-11-28T05:02:30.%03dZ","message":%s,%s}`, session, seq, dir, ms, frame, http200)
	}
	head := func(session string, start, end int) string {
		return fmt.Sprintf(`{"session":%q,"info":{"transport":"streamable-http","start":"2026-11-28T05:02:30.%03dZ","end":{"time":"2026-11-28T05:02:30.%03dZ","reason":"eof"}}}`, session, start, end)
	}
	jsonl := strings.Join([]string{
		head("s1", 0, 45),
		msg("s1", 1, "c2s", 0, `{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{`+meta+`,"notifications":{"toolsListChanged":true}}}`),
		msg("s1", 2, "s2c", 1, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`),
		msg("s1", 3, "s2c", 30, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`),
		head("s2", 10, 50),
		msg("s2", 1, "c2s", 10, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+meta+`,"name":"grow","arguments":{}}}`),
		msg("s2", 2, "s2c", 20, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"grew"}],"resultType":"complete"}}`),
		head("s3", 40, 50),
		msg("s3", 1, "c2s", 40, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`),
	}, "\n") + "\n"
	dir := t.TempDir()
	src := filepath.Join(dir, "client.jsonl")
	if err := os.WriteFile(src, []byte(jsonl), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCaptured("rerun", "--exit-code", src, "--upstream", ts.URL+"/mcp")
	if code != 0 || !strings.HasSuffix(stdout, "\n3 sessions rerun: 3 the same, 0 changed\n") || !strings.Contains(stdout, "s1 (with s2,s3, one client's connections, rerun together)") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The call grows nothing now.
	changed := filepath.Join(dir, "changed.jsonl")
	if err := os.WriteFile(changed, []byte(strings.Replace(jsonl, `"name":"grow","arguments":{}`, `"name":"echo","arguments":{"text":"grew"}`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCaptured("rerun", "--exit-code", "--timeout", "300ms", changed, "--upstream", ts.URL+"/mcp")
	if code != 1 || !strings.Contains(stdout, "! server notification not heard again: notifications/tools/list_changed: 1 in the recording, 0 in the rerun\n") {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
}
