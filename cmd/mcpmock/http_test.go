package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// serveInProcess runs mcpmock with args in process, with no stdin, until
// ctx ends: its stderr comes line by line on lines (which the caller
// reads to the end, or mcpmock's next line waits), its error on done.
func serveInProcess(ctx context.Context, args ...string) (lines <-chan string, done <-chan error) {
	pr, pw := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- run(ctx, args, streams{In: strings.NewReader(""), Out: io.Discard, Err: pw})
		pw.Close()
	}()
	read := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			read <- sc.Text()
		}
		close(read)
	}()
	return read, ran
}

// TestServe_HTTP runs "mcpmock serve --http" in process: it prints the
// listening line, serves, and writes its report when interrupted.
func TestServe_HTTP(t *testing.T) {
	db := writeTape(t)
	report := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := serveInProcess(ctx, "serve", "--http", ":0", "--report", report, db)
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
	post := func(body, sid string) *http.Response { return postMCP(t, url, body, sid) }
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

// TestServe_FallbackHTTPFront: with no SOURCE, mcpmock serving Streamable
// HTTP records what its --upstream server answered, as over stdio: a
// client session ended with DELETE, then SIGINT, leave the cassette made
// and the summary line said. It was reported not to (no file, no line)
// for the TypeScript client; no run here has shown it, and this keeps
// the case covered for both SDKs' clients. Through the binary, so that
// the signal and the shutdown are the real ones.
func TestServe_FallbackHTTPFront(t *testing.T) {
	everything := func(t *testing.T) string {
		return peertest.EverythingHTTP(t, "streamableHttp") + "/mcp"
	}
	gosdkHTTP := func(t *testing.T) string {
		p := peertest.Start(t, t.TempDir(), nil, nil, nil, peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver"), "-http", "127.0.0.1:0")
		return p.WaitLine(t, "gosdkserver: listening on ", 30*time.Second) + "mcp"
	}
	tsClient := func(t *testing.T, url, echoArgs string) string {
		argv := peertest.NodeScript(t, "http-client.mjs", "streamable", url, "echo", echoArgs)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = peertest.NPMDir(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("http-client.mjs: %v\n%s", err, out)
		}
		return string(out)
	}
	goClient := func(t *testing.T, url, echoArgs string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var args map[string]any
		if err := json.Unmarshal([]byte(echoArgs), &args); err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close() // a DELETE ends the session, as the TS client's does
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil {
			t.Fatalf("echo: %v", err)
		}
		b, _ := json.Marshal(res.Content)
		return string(b)
	}
	for _, tc := range []struct {
		name     string
		upstream func(t *testing.T) string
		client   func(t *testing.T, url, echoArgs string) string
		echoArgs string
		echoed   string
	}{
		{"TS client, server-everything", everything, tsClient, `{"message":"x"}`, "Echo: x"},
		{"go-sdk client, server-everything", everything, goClient, `{"message":"x"}`, "Echo: x"},
		{"go-sdk client, go-sdk server", gosdkHTTP, goClient, `{"text":"x"}`, `"text":"x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "fb.db")
			mock := peertest.Start(t, dir, nil, nil, nil, peertest.Binary(t, "mcpmock"),
				"serve", "--http", "127.0.0.1:0", "--upstream", tc.upstream(t), "--record-new", db)
			url := mock.WaitLine(t, "mcpmock: listening on ", 30*time.Second)
			if out := tc.client(t, url, tc.echoArgs); !strings.Contains(out, tc.echoed) {
				t.Fatalf("the client saw %s; want %q", out, tc.echoed)
			}
			mock.Stop(t, 30*time.Second)
			if want := "answered by the fallback server, recorded in " + db; !strings.Contains(mock.Stderr(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, mock.Stderr())
			}
			tape, err := store.Load(db)
			if err != nil {
				t.Fatalf("%v; stderr:\n%s", err, mock.Stderr())
			}
			if len(tape.Sessions) == 0 {
				t.Fatal("the cassette holds no session")
			}
			var frames strings.Builder
			for _, s := range tape.Sessions {
				for _, m := range s.Messages {
					frames.Write(m.Frame)
				}
			}
			if !strings.Contains(frames.String(), `"method":"tools/call"`) {
				t.Errorf("the echo call is not recorded; the cassette holds:\n%s", frames.String())
			}
		})
	}
}

// TestServe_JournalAndReportToStdout: over HTTP, stdout is free, and
// --journal - and --report - write there (no file named "-"): the
// journal's lines as requests arrive, then the report at exit. On stdio
// they are usage errors, since stdout carries the MCP messages.
func TestServe_JournalAndReportToStdout(t *testing.T) {
	db := writeTape(t)
	t.Chdir(t.TempDir())
	for _, flag := range []string{"--journal", "--report"} {
		code, _, stderr := runWith(t, "", "serve", flag, "-", db)
		if want := "serve: " + flag + " -: on stdio, stdout carries the MCP messages"; code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s - on stdio: exit %d, stderr %q; want exit 2 and %q", flag, code, stderr, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stdout strings.Builder // written by run alone, read once it returned
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--journal", "-", "--report", "-", db}, streams{In: strings.NewReader(""), Out: &stdout, Err: pw})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no listening line: %v", <-done)
	}
	url, ok := strings.CutPrefix(sc.Text(), "mcpmock: listening on ")
	if !ok {
		t.Fatalf("first stderr line %q", sc.Text())
	}
	go io.Copy(io.Discard, pr)
	sid := ""
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`} {
		resp := postMCP(t, url, body, sid)
		sid = resp.Header.Get("Mcp-Session-Id")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	lines := strings.SplitAfterN(stdout.String(), "\n", 3)
	var methods [2]struct{ Method string }
	var r replay.Report
	if len(lines) != 3 || json.Unmarshal([]byte(lines[0]), &methods[0]) != nil || json.Unmarshal([]byte(lines[1]), &methods[1]) != nil ||
		methods[0].Method != "initialize" || methods[1].Method != "tools/list" || json.Unmarshal([]byte(lines[2]), &r) != nil || len(r.Unused) != 1 {
		t.Errorf("stdout:\n%s\nwant the journal's initialize and tools/list lines, then a report with tools/call unused", stdout.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was made`)
	}
}

// postMCP POSTs a JSON-RPC body to a Streamable HTTP url as a client
// does, in session sid unless it is "".
func postMCP(tb testing.TB, url, body, sid string) *http.Response {
	tb.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// TestServe_WrongURLNamesTheEndpoints: the TypeScript SDK's clients given
// the listener at the wrong path (the base URL, the other transport's
// endpoint) are refused with a body that says where the endpoints are,
// which the Streamable HTTP client puts in its error; the SSE client
// shows only the status, so stderr says it too. They met Go's bare
// "404 page not found" and "Method Not Allowed" before.
func TestServe_WrongURLNamesTheEndpoints(t *testing.T) {
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-basic.yaml")
	p := peertest.Start(t, t.TempDir(), nil, nil, nil, peertest.Binary(t, "mcpmock"), "serve", "--http", "127.0.0.1:0", script)
	url := strings.TrimSpace(p.WaitLine(t, "mcpmock: listening on ", 30*time.Second))
	base := strings.TrimSuffix(url, "/mcp")
	got := peertest.NodeTranscript(t, 60*time.Second, nil, "wrong-url-client.mjs", base)
	const where = "Streamable HTTP is at /mcp, legacy HTTP+SSE at /sse (GET) and /message (POST)"
	want := []string{
		"sse /mcp: SSE error: Non-200 status code (400)",
		"http /: Streamable HTTP error: Error POSTing to endpoint: Not Found: mcpmock serves nothing at /; " + where,
		"http /sse: Streamable HTTP error: Error POSTing to endpoint: Method Not Allowed: /sse is the legacy HTTP+SSE event stream, opened with GET; " + where,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the clients saw (-want +got):\n%s", d)
	}
	p.Stop(t, 10*time.Second)
	// Said once, for the first: a browser or a scanner may send many.
	if stderr := p.Stderr(); strings.Count(stderr, where) != 1 || !strings.Contains(stderr, "mcpmock: GET /mcp: 400; "+where+" (said once)\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestServe_NodeRunnerStopsWithSIGTERM: a Node test suite's afterEach
// (testdata/npm/runner-harness.mjs, the example in docs/REPLAY.md) stops
// mcpmock with SIGTERM while the TypeScript SDK client is still
// connected: the report is written by the time the exit event fires, and
// --strict decides the exit code, as at the end of stdin.
func TestServe_NodeRunnerStopsWithSIGTERM(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-basic.yaml")
	tests := []struct {
		name, tool, args string
		wantCode         int
		wantUnmatched    int
	}{
		{"all matched", "greet", `{"name":"Ada"}`, 0, 0},
		{"one unmatched", "nope", `{}`, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			argv := peertest.NodeScript(t, "runner-harness.mjs", mock, report, script, tt.tool, tt.args)
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = peertest.NPMDir(t)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("runner-harness.mjs: %v\n%s", err, out)
			}
			var got struct {
				Code   int           `json:"code"`
				Report replay.Report `json:"report"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.Code != tt.wantCode || len(got.Report.Unmatched) != tt.wantUnmatched || got.Report.Matched != 2-tt.wantUnmatched {
				t.Errorf("exit %d (want %d), report %+v; output %s", got.Code, tt.wantCode, got.Report, out)
			}
		})
	}
}

// TestServe_NodeStdioCloseWhileACallWaits: the TypeScript SDK's
// StdioClientTransport.close() while a call waits
// (testdata/npm/stdio-close-client.mjs) ends mcpmock at the end of its
// stdin, so close() never gets to its SIGTERM. A call on a script's long
// delay, given up, is reported interrupted, not matched, and fails
// --strict; a hung call (fault: hang) ends the same way and counts as
// matched: never answering was its answer.
func TestServe_NodeStdioCloseWhileACallWaits(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.yaml")
	if err := os.WriteFile(script, []byte("server: {name: s, version: \"1\"}\ntools:\n"+
		"  - {name: slow, answers: [{text: done, delay: 1h}]}\n"+
		"  - {name: hang, answers: [{fault: hang}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool        string
		code        int
		matched     int
		interrupted []replay.Interrupted
	}{
		{"slow", 1, 1, []replay.Interrupted{{Method: "tools/call", Params: `{"name":"slow"}`, Why: "the client closed stdin while it waited"}}},
		{"hang", 0, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			argv := peertest.NodeScript(t, "stdio-close-client.mjs", mock, report, script, tt.tool)
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = peertest.NPMDir(t)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("stdio-close-client.mjs: %v\n%s%s", err, out, stderr.String())
			}
			var got struct {
				Signals []string `json:"signals"`
				Exit    struct {
					Code   *int    `json:"code"`
					Signal *string `json:"signal"`
				} `json:"exit"`
				Call   string        `json:"call"`
				Report replay.Report `json:"report"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(got.Signals) != 0 || got.Exit.Signal != nil || got.Exit.Code == nil {
				t.Fatalf("close() sent %v; mcpmock exited with code %v, signal %v: want an exit at the end of stdin, no signal; stderr:\n%s", got.Signals, got.Exit.Code, got.Exit.Signal, stderr.String())
			}
			if *got.Exit.Code != tt.code {
				t.Errorf("exit code %d, want %d (--strict); stderr:\n%s", *got.Exit.Code, tt.code, stderr.String())
			}
			if got.Report.Matched != tt.matched || !slices.Equal(got.Report.Interrupted, tt.interrupted) {
				t.Errorf("report %+v, want %d matched, interrupted %+v", got.Report, tt.matched, tt.interrupted)
			}
			if got.Call == "answered" {
				t.Error("the call was answered")
			}
		})
	}
}

// TestServe_ListeningLineOfEveryInterface: bound to every interface
// (0.0.0.0, as in a container), the listening line gives a URL a client
// on this machine connects to, not http://[::]:PORT/mcp, which Go prints
// for the unspecified address and not every client can reach; a second
// line says where it is bound.
func TestServe_ListeningLineOfEveryInterface(t *testing.T) {
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-basic.yaml")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := serveInProcess(ctx, "serve", "--http", "0.0.0.0:0", script)
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no stderr line within 10s")
			return ""
		}
	}
	first := next()
	url, ok := strings.CutPrefix(first, "mcpmock: listening on http://127.0.0.1:")
	if !ok || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("listening line %q", first)
	}
	port := strings.TrimSuffix(url, "/mcp")
	if second := next(); !strings.HasPrefix(second, "mcpmock: (bound to ") || !strings.HasSuffix(second, ":"+port+": every interface of this machine)") {
		t.Errorf("second line %q", second)
	}
	go func() { // keep stderr flowing
		for range lines {
		}
	}()
	r := postMCP(t, "http://127.0.0.1:"+url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, "")
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !strings.Contains(string(b), `"name":"demo-tools"`) {
		t.Errorf("initialize at the URL given: %s", b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
