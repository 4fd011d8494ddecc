package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func showOutput(tb testing.TB, args ...string) string {
	tb.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{"show"}, args...), streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
		tb.Fatalf("mcpspy show %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestMcpspy_Show prints the shipped real-peer cassettes as text: one line
// per message, in the table's columns, the method and tool last.
func TestMcpspy_Show(t *testing.T) {
	for _, name := range []string{"everything-stdio", "everything-http"} {
		t.Run(name, func(t *testing.T) {
			db := shippedCassette(t, name+".db")
			text := showOutput(t, db)
			if jsonl := showOutput(t, shippedCassette(t, name+".jsonl")); jsonl != text {
				t.Errorf("the .jsonl twin shows differently:\n%s\nvs\n%s", jsonl, text)
			}
			tape := readTape(t, db)
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			msgs := tape.Sessions[0].Messages
			if len(tape.Sessions) != 1 || len(lines) != len(msgs) {
				t.Fatalf("%d lines for %d sessions, %d messages:\n%s", len(lines), len(tape.Sessions), len(msgs), text)
			}
			first := lines[0]
			want := fmt.Sprintf("%7d %s", msgs[0].Seq, msgs[0].Time.Local().Format("15:04:05.000"))
			if !strings.HasPrefix(first, want) || !strings.Contains(first, " → req ") || !strings.HasSuffix(first, " initialize") {
				t.Errorf("first line %q: want it to start %q, be a → req, end with initialize", first, want)
			}
			if !strings.Contains(lines[1], " ← resp ") || !strings.HasSuffix(lines[1], " initialize") {
				t.Errorf("second line %q: want the ← resp to initialize", lines[1])
			}
		})
	}
}

func TestMcpspy_ShowFilterAndBodies(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	text := showOutput(t, "--filter", "tool:echo", "--body", db)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 2 messages with a body line each, got:\n%s", text)
	}
	tape := readTape(t, db)
	for i := 0; i < 4; i += 2 {
		if !strings.HasSuffix(lines[i], " tools/call echo") {
			t.Errorf("line %d %q: want a tools/call echo line", i, lines[i])
		}
		var seq uint64
		if _, err := fmt.Sscan(lines[i], &seq); err != nil {
			t.Fatalf("line %q has no seq: %v", lines[i], err)
		}
		frame := string(tape.Sessions[0].Messages[seq-1].Frame)
		if lines[i+1] != "    "+frame {
			t.Errorf("body of #%d:\n got %q\nwant %q", seq, lines[i+1], "    "+frame)
		}
	}
	// Several sessions: seqs name their session; --session scopes.
	two := twoSessionCassette(t)
	all := showOutput(t, "--filter", "tool:echo", two)
	if !strings.Contains(all, "s1:7 ") || !strings.Contains(all, "s2:") {
		t.Errorf("two sessions, seqs not qualified:\n%s", all)
	}
	if one := showOutput(t, "--session", "s2", "--filter", "tool:echo", two); strings.Count(one, "\n") != 2 || strings.Contains(one, "s2:") {
		t.Errorf("--session s2: want its two echo lines, unqualified:\n%s", one)
	}
	// --http: the recorded HTTP metadata under each line, before the body.
	web := showOutput(t, "--http", "--body", "--filter", "tool:echo", shippedCassette(t, "everything-http.db"))
	wl := strings.Split(strings.TrimSuffix(web, "\n"), "\n")
	if len(wl) < 6 || !strings.HasSuffix(wl[0], " tools/call echo") || !strings.HasPrefix(wl[1], "    http: POST /mcp  stream post-body#") ||
		!strings.HasPrefix(wl[2], `    {"method":"tools/call"`) || !strings.HasPrefix(wl[4], "    http: POST /mcp → 200  stream post-sse#") ||
		!strings.HasPrefix(wl[5], `    sse: id="`) || !strings.Contains(web, `    {"result":{"content":[{"type":"text","text":"Echo: hello from mcptape"}]}`) {
		t.Errorf("--http --body on the HTTP cassette:\n%s", web)
	}
	if stdio := showOutput(t, "--http", "--filter", "tool:echo", db); strings.Contains(stdio, "http:") {
		t.Errorf("--http on a stdio cassette printed HTTP metadata:\n%s", stdio)
	}
	// Every body of both sessions, read in batches, under its own line.
	frames := map[string]string{}
	for _, s := range readTape(t, two).Sessions {
		for _, m := range s.Messages {
			frames[fmt.Sprintf("%s:%d", s.Info.ID, m.Seq)] = string(m.Frame)
		}
	}
	bodies := strings.Split(strings.TrimSuffix(showOutput(t, "--body", two), "\n"), "\n")
	if len(bodies) != 2*len(frames) {
		t.Fatalf("%d lines for %d messages with bodies", len(bodies), len(frames))
	}
	for i := 0; i < len(bodies); i += 2 {
		ref := strings.Fields(bodies[i])[0]
		if want := "    " + strings.TrimRight(frames[ref], "\r\n"); bodies[i+1] != want {
			t.Errorf("body under %s:\n got %.120q\nwant %.120q", ref, bodies[i+1], want)
		}
	}
}

// show --tools prints the inspector's tools summary: every tools/call of
// the shipped session, one row per tool.
func TestMcpspy_ShowTools(t *testing.T) {
	text := showOutput(t, "--tools", shippedCassette(t, "everything-stdio.db"))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	wantTools := []string{"echo", "get-structured-content", "get-sum", "get-tiny-image", "trigger-long-running-operation"}
	if len(lines) != 1+len(wantTools) || strings.Join(strings.Fields(lines[0]), " ") != "tool calls errors pending cancelled p50 p95" {
		t.Fatalf("want a header and %d tools:\n%s", len(wantTools), text)
	}
	for i, tool := range wantTools {
		f := strings.Fields(lines[i+1])
		if len(f) != 7 || f[0] != tool || f[1] != "1" || f[2] != "0" || f[3] != "0" || f[4] != "0" || f[5] != f[6] {
			t.Errorf("row %q: want %s called once, no error, nothing pending or cancelled, p50 = p95", lines[i+1], tool)
		}
	}
	// The long-running call asked for 0.3 s. (Node's timers may fire a
	// millisecond early: a re-recording measured 299ms.)
	if f := strings.Fields(lines[len(lines)-1]); len(f) == 7 {
		if d, err := time.ParseDuration(f[5]); err != nil || d < 250*time.Millisecond {
			t.Errorf("trigger-long-running-operation p50 %q (%v), want about 300ms", f[5], err)
		}
	}
	if got := showOutput(t, "--tools", "--session", "s2", twoSessionCassette(t)); !strings.Contains(got, "echo") {
		t.Errorf("--tools --session s2:\n%s", got)
	}
}

func TestMcpspy_ShowErrors(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // the start of stderr's last line (usage errors print the flags first)
	}{
		{"no cassette", nil, 2, "mcpspy: show: want exactly one CASSETTE, got 0 arguments"},
		{"bad flag", []string{"--tail", db}, 2, "mcpspy: show: flag provided but not defined: -tail"},
		{"bad filter", []string{"--filter", "colour:red", db}, 2, `mcpspy: show: --filter "colour:red": unknown key "colour"`},
		{"bad status", []string{"--filter", "status:abc", db}, 2, `mcpspy: show: --filter "status:abc": status must be an HTTP status from 100 to 599 (404) or a class from 1xx to 5xx, not "abc"`},
		{"follow a jsonl", []string{"--follow", "x.jsonl"}, 2, "mcpspy: show: --follow needs a .db cassette"},
		{"unknown session", []string{"--session", "s9", db}, 1, `mcpspy: ` + db + `: no such session "s9"`},
		{"missing file", []string{"missing.db"}, 1, "mcpspy: missing.db: cassette does not exist"},
		{"no match", []string{"--filter", "tool:echo error", db}, 0, "mcpspy: show: the filter matched no message"},
		{"a mistyped tool", []string{"--filter", "tool:ecoh", db}, 0, `mcpspy: show: the filter matched no message: no message has tool "ecoh" (did you mean echo?)`},
		{"a filter naming no session", []string{"--filter", "session:s3 tool:echo", db}, 1, `mcpspy: show: --filter session:s3: ` + db + `: no such session "s3" (it holds`},
		{"tools with a filter", []string{"--tools", "--filter", "error", db}, 2, "mcpspy: show: --tools summarises every tools/call"},
		{"tools with follow", []string{"--tools", "--follow", db}, 2, "mcpspy: show: --tools summarises every tools/call"},
		{"tools with http", []string{"--tools", "--http", db}, 2, "mcpspy: show: --tools summarises every tools/call"},
		{"resend with body", []string{"--resend", "--body", db}, 2, "mcpspy: show: --resend prints commands in place of the lines; it takes --session, --filter and --follow, not --tools, --body, --http or --lint"},
		{"resend with tools", []string{"--resend", "--tools", db}, 2, "mcpspy: show: --resend prints commands in place of the lines"},
		{"resend with lint", []string{"--resend", "--lint", db}, 2, "mcpspy: show: --resend prints commands in place of the lines"},
		{"resend, nothing to send", []string{"--resend", "--filter", "dir:s2c", db}, 0, "mcpspy: show: no client request or notification shown, so no command to print"},
		{"resend, no match", []string{"--resend", "--filter", "tool:nosuch", db}, 0, "mcpspy: show: the filter matched no message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), append([]string{"show"}, tt.args...), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code := cli.ExitCode("mcpspy", err, &errb); code != tt.wantCode {
				t.Errorf("exit %d, want %d (%v)", code, tt.wantCode, err)
			}
			lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, tt.wantErr) {
				t.Errorf("stderr %q: want it to end with a line starting %q", errb.String(), tt.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("wrote to stdout: %q", out.String())
			}
		})
	}
}

// liveSession starts recording a session into a new cassette, as a
// recorder in another process would, and returns the cassette's path.
func liveSession(t *testing.T) (string, *store.Writer, *store.Session) {
	t.Helper()
	db, w := liveCassette(t)
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return db, w, s
}

// followedShow is mcpspy show --follow running in the background.
type followedShow struct {
	out    syncbuf.Buffer
	cancel context.CancelFunc
	done   chan error
}

// startShow runs mcpspy show with args until stop.
func startShow(t *testing.T, args ...string) *followedShow {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &followedShow{cancel: cancel, done: make(chan error, 1)}
	go func() {
		f.done <- run(ctx, append([]string{"show"}, args...), streams{In: strings.NewReader(""), Out: &f.out, Err: &f.out})
	}()
	return f
}

// wait polls the output until it holds want n times, for up to 5 s.
func (f *followedShow) wait(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(f.out.String(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %q (%d times) within 5 s; output so far:\n%s", want, n, f.out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the output, with a deadline
	}
}

// stop interrupts show, as Ctrl-C does, and returns what it printed.
func (f *followedShow) stop(t *testing.T) string {
	t.Helper()
	f.cancel()
	select {
	case err := <-f.done:
		if err != nil {
			t.Fatalf("show --follow: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("show --follow did not stop when interrupted")
	}
	return f.out.String()
}

// show --follow prints what a recorder adds while it runs, and stops
// cleanly when interrupted.
func TestMcpspy_ShowFollow(t *testing.T) {
	db, w, s := liveSession(t)
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show := startShow(t, "--follow", "--filter", "kind:request", db)
	show.wait(t, " tools/list", 1)
	s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), nil)
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late"}}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show.wait(t, " tools/call late", 1)
	if got := show.stop(t); strings.Contains(got, "resp") || strings.Count(got, "\n") != 2 {
		t.Errorf("want the two requests only, the filter applied to what follows:\n%s", got)
	}
}

// show --follow --session NAME follows a session recorded later under
// that name too: a host wrapped by mcpspy wrap records each start of a
// server as a new session named after it.
func TestMcpspy_ShowFollowSessionName(t *testing.T) {
	db, w := liveCassette(t)
	newSession := func(name string) *store.Session {
		s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Name: name, Upstream: "live", Start: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	newSession("srv").Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show := startShow(t, "--follow", "--session", "srv", db)
	show.wait(t, " ping", 1)
	newSession("other").Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`), nil)
	newSession("srv").Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show.wait(t, " tools/list", 1)
	out := show.stop(t)
	if !strings.Contains(out, "s1:1 ") || !strings.Contains(out, "s3:1 ") || strings.Contains(out, "resources/list") {
		t.Errorf("want srv's two sessions, named, and not the other:\n%s", out)
	}
}

// show --follow in one process while mcpspy records server-everything in
// another: the messages show up while the recorder still runs (it holds
// the cassette between commits and lets go when a reader waits).
func TestMcpspy_ShowFollowsLiveRecorder(t *testing.T) {
	t.Parallel()
	env, port := peertest.FreePortEnv(t)
	se := peertest.Start(t, peertest.NPMDir(t), []string{env}, nil, nil, peertest.ServerEverything(t, "streamableHttp")...)
	se.WaitLine(t, "MCP Streamable HTTP Server listening on port", 30*time.Second)
	cassette := filepath.Join(t.TempDir(), "live.db")
	spy := startSpy(t, "-o", cassette, "--upstream", fmt.Sprintf("http://127.0.0.1:%d/mcp", port))

	show := startShow(t, "--follow", "--filter", "tool:echo", cassette)
	argv := peertest.NodeScript(t, "http-client.mjs", "streamable", spy.url+"/mcp", "echo", `{"message":"live"}`)
	client := exec.Command(argv[0], argv[1:]...)
	client.Dir = peertest.NPMDir(t)
	if b, err := client.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("Echo: live")) {
		t.Fatalf("client: %v\n%s", err, b)
	}
	show.wait(t, " tools/call echo", 2) // the call and its answer
	out := show.stop(t)
	if err := spy.stop(t); err != nil {
		t.Fatalf("mcpspy exit: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], " → req ") || !strings.Contains(lines[1], " ← resp ") {
		t.Errorf("want the echo request and its answer, got:\n%s", out)
	}
}

// A 2026-07-28 result that asks the client for input (the go-sdk
// server's confirm tool, recorded on stdio with the go-sdk client) shows
// as such, in the .db and its .jsonl export alike; the retry's answer
// does not.
func TestMcpspy_ShowInputRequired(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	recordGoStdio(t, db, nil, nil, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}, func(ctx context.Context, cs *mcp.ClientSession) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm"}); err != nil {
			t.Fatal(err)
		}
	})
	jsonl := filepath.Join(dir, "c.jsonl")
	runText(t, "export", "-o", jsonl, db)
	for _, path := range []string{db, jsonl} {
		lines := strings.Split(strings.TrimSuffix(showOutput(t, "--filter", "tool:confirm", path), "\n"), "\n")
		var ends []string
		for _, l := range lines {
			ends = append(ends, l[strings.Index(l, "tools/call"):])
		}
		want := []string{"tools/call confirm", "tools/call confirm [input required]", "tools/call confirm", "tools/call confirm"}
		if strings.Join(ends, "|") != strings.Join(want, "|") {
			t.Errorf("%s:\n%s\nwant the first answer marked, the retry's not", filepath.Base(path), strings.Join(lines, "\n"))
		}
	}
}

// --http prints the recorder's note on an HTTP message: what a refusal's
// body began with, who answered.
func TestShow_HTTPNote(t *testing.T) {
	jsonl := filepath.Join(t.TempDir(), "refused.jsonl")
	lines := `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-27T08:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-27T08:00:00.001Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}},"http":{"method":"POST","path":"/mcp","status":404,"request_header":{"Mcp-Session-Id":["gone"]},"stream":"post-body","stream_id":1},"note":"refused without a message: session not found"}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-27T08:00:00.002Z","raw":"session not found\n","http":{"method":"POST","path":"/mcp","status":404,"stream":"json","stream_id":1}}
`
	if err := os.WriteFile(jsonl, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out := showOutput(t, "--http", jsonl)
	want := "    http: POST /mcp → 404  stream post-body#1\n    note: refused without a message: session not found\n"
	if !strings.Contains(out, want) || strings.Count(out, "note:") != 1 {
		t.Errorf("show --http:\n%s\nwant the request's lines to hold\n%s", out, want)
	}
	if plain := showOutput(t, jsonl); strings.Contains(plain, "note:") {
		t.Errorf("show without --http printed the note:\n%s", plain)
	}
}

// --session repeated shows those sessions, as export takes them: each
// line's seq names its session when more than one is shown.
func TestMcpspy_ShowSessions(t *testing.T) {
	db := twoSessionCassette(t)
	stdio, err := os.ReadFile(shippedCassette(t, "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	third := filepath.Join(t.TempDir(), "s3.jsonl")
	if err := os.WriteFile(third, bytes.ReplaceAll(stdio, []byte(`{"session":"s1",`), []byte(`{"session":"s3",`)), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK(t, "import", "-o", db, third)
	tests := []struct {
		name string
		args []string
		want []string // the sessions of the lines, each once; "" for unqualified seqs
	}{
		{"all", nil, []string{"s1", "s2", "s3"}},
		{"one", []string{"--session", "s2"}, []string{""}},
		{"two", []string{"--session", "s3", "--session", "s1"}, []string{"s1", "s3"}},
		{"one twice", []string{"--session", "s3", "--session", "s3"}, []string{""}},
		{"two, filtered", []string{"--session", "s1", "--session", "s2", "--filter", "tool:echo"}, []string{"s1", "s2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSuffix(showOutput(t, append(tt.args, db)...), "\n"), "\n") {
				session, _, qualified := strings.Cut(strings.Fields(l)[0], ":")
				if !qualified {
					session = ""
				}
				seen[session] = true
			}
			var got []string
			for s := range seen {
				got = append(got, s)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines of %q, want %q", got, tt.want)
			}
		})
	}
	// s1 and s3 are the same recording: each tool's calls count twice.
	tools := strings.Fields(strings.Split(showOutput(t, "--tools", "--session", "s1", "--session", "s3", db), "\n")[1])
	if len(tools) < 2 || tools[0] != "echo" || tools[1] != "2" {
		t.Errorf("--tools with s1 and s3: echo line %q, want 2 calls", tools)
	}
}

// show --follow of a cassette no recorder has made yet waits for it, and
// an interrupt while it waits is a clean stop, as it is later.
func TestMcpspy_ShowFollowWaitsForTheCassette(t *testing.T) {
	db := filepath.Join(t.TempDir(), "later.db")
	show := startShow(t, "--follow", db)
	show.wait(t, "mcpspy: show: "+db+" does not exist yet; waiting for a recorder to create it", 1)
	if out := show.stop(t); strings.Count(out, "\n") != 1 {
		t.Errorf("interrupted while waiting, show printed more than that it waits:\n%s", out)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("show made the cassette it waited for")
	}
	// In a directory that is not there either (a typo), it says so.
	dir := filepath.Join(t.TempDir(), "nodir")
	show = startShow(t, "--follow", filepath.Join(dir, "later.db"))
	show.wait(t, "mcpspy: show: "+filepath.Join(dir, "later.db")+" does not exist yet (nor does its directory "+dir+", which a recorder does not make); waiting for a recorder to create it", 1)
	show.stop(t)
}

// show's CASSETTE "-" is a JSONL export on stdin, as tshark -r - reads a
// capture from a pipe: it prints what show of the same file prints (a HAR
// too: TestMcpspy_ReadersTakeHAROnStdin). --follow is not taken from a
// pipe.
func TestMcpspy_ShowStdin(t *testing.T) {
	path := shippedCassette(t, "everything-stdio.jsonl")
	jsonl, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	showIn := func(stdin []byte, args ...string) (int, string, string) {
		// Bounded: a show that took "-" for a cassette to --follow
		// would wait for it for ever.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		err := run(ctx, append([]string{"show"}, args...), streams{In: bytes.NewReader(stdin), Out: &out, Err: &errb})
		return cli.ExitCode("mcpspy", err, &errb), out.String(), errb.String()
	}
	for _, args := range [][]string{{"--body"}, {"--filter", "tool:echo"}, {"--tools"}, {"--session", "everything", "--resend"}} {
		_, want, _ := runCaptured(append(append([]string{"show"}, args...), path)...)
		if code, got, stderr := showIn(jsonl, append(args, "-")...); code != 0 || got != want || want == "" {
			t.Errorf("show %v -: exit %d, stderr %q, stdout:\n%s\nwant what show of the file prints:\n%s", args, code, stderr, got, want)
		}
	}
	for _, tt := range []stdinCase{
		{"--follow", jsonl, []string{"--follow", "-"}, 2, "mcpspy: show: --follow needs a .db cassette; stdin is read whole, as a JSONL export or a HAR\n"},
		{"nothing", nil, []string{"-"}, 0, "mcpspy: show: stdin holds no message\n"},
		{"a broken line", []byte("{\"session\":\n"), []string{"-"}, 1, "mcpspy: stdin:1: bad JSONL cassette"},
	} {
		if code, _, stderr := showIn(tt.stdin, tt.args...); code != tt.code || !strings.HasPrefix(lastBlock(stderr), tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tt.name, code, stderr, tt.code, tt.want)
		}
	}
}
