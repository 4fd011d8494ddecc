package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
)

const tape = `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}}
{"session":"s1","seq":4,"dir":"s2c","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[]}}}
`

func writeTape(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(p, []byte(tape), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runWith(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	code = cli.ExitCode("mcpmock", err, &errb)
	return code, out.String(), errb.String()
}

func TestRun_Usage(t *testing.T) {
	db := writeTape(t)
	badAsks := filepath.Join(t.TempDir(), "asks.yaml")
	if err := os.WriteFile(badAsks, []byte("prompts:\n  - name: p\n    sample: {messages: [{role: user, text: hi}]}\n    answers: [{messages: [{role: user, text: hi}]}]\nresources:\n  - {uri: \"file:///a\", name: a, answers: [{when: {elicited: {action: accept}}, text: x}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badFaults := filepath.Join(t.TempDir(), "faults.yaml")
	if err := os.WriteFile(badFaults, []byte("tools:\n  - name: a\n    answers: [{fault: http-200}]\n  - name: b\n    answers: [{fault: http-abc}]\n  - name: c\n    answers: [{fault: http-600}]\n  - name: d\n    answers: [{fault: http-503, headers: {Retry After: 30}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	override := filepath.Join(t.TempDir(), "override.yaml")
	if err := os.WriteFile(override, []byte("tools:\n  - name: a\n    answers: [{text: x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notZip := filepath.Join(t.TempDir(), "session.zip")
	if err := os.WriteFile(notZip, []byte(`{"log":{"entries":[]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	misnamed := t.TempDir()
	exportAsDB := peertest.ShippedAs(t, "everything-stdio.jsonl", misnamed, "export.db")
	cassetteAsJSONL := peertest.ShippedAs(t, "everything-stdio.db", misnamed, "cassette.jsonl")
	// Cut before the root of its tree (page 9): nothing to salvage.
	cutRoot := peertest.ShippedAs(t, "everything-stdio.db", misnamed, "cut.db")
	if err := os.Truncate(cutRoot, 20480); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	alias := filepath.Join(filepath.Dir(db), "alias.jsonl") // the same file by another name
	if err := os.Symlink(db, alias); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no command", nil, 2, "no command given"},
		{"unknown command", []string{"play"}, 2, `unknown command "play" (want serve or check)` + "\n"},
		{"a command near one", []string{"serv"}, 2, `unknown command "serv" (want serve or check); did you mean serve?`},
		{"flags before the command", []string{"--http", "0", "serve", "x.yaml"}, 2, `"--http 0" comes before the command serve: flags go after it (serve --http 0 …)`},
		{"a flag and no command", []string{"--strict"}, 2, `unknown command "--strict" (want serve or check)`},
		{"help", []string{"-h"}, 0, ""},
		{"no source", []string{"serve"}, 2, "no SOURCE given"},
		{"unknown kind", []string{"serve", "x.txt"}, 2, `source "x.txt": unknown kind`},
		{"a directory", []string{"serve", misnamed}, 2, `source "` + misnamed + `": a directory, not a file (want a cassette .db`},
		{"check a directory", []string{"check", misnamed}, 2, `source "` + misnamed + `": a directory, not a file`},
		{"an export named .db", []string{"serve", exportAsDB}, 1, exportAsDB + ": not an mcptape cassette: it looks like a JSONL export (it starts with {), not a bbolt cassette as its name says; name it .jsonl to read it as one\n"},
		{"a cassette cut before its root", []string{"check", cutRoot}, 1, "and the cut took the root of its tree (page 9, at byte 36864): nothing in it can be salvaged, as every page is found from the root; only a whole copy helps\n"},
		{"a cassette named .jsonl", []string{"check", cassetteAsJSONL}, 1, cassetteAsJSONL + ": not a JSONL export: it looks like a bbolt cassette (it starts with a bbolt meta page), not a JSONL export as its name says; name it .db to read it as one\n"},
		{"both transports", []string{"serve", "--http", ":0", "--ws", ":0", db}, 2, "give --http or --ws, not both"},
		{"bad match", []string{"serve", "--match", "fuzzy", db}, 2, `unknown match mode "fuzzy"`},
		{"a match mode near one", []string{"serve", "--match", "ignore-param=tools/call", db}, 2, `unknown match mode "ignore-param=tools/call" (want default, strict, ignore-params or ignore-params=METHOD,...); did you mean ignore-params?`},
		{"ignore-params naming a method nothing recorded", []string{"serve", "--match", "ignore-params=tools/lst", db}, 2, `serve: match mode "ignore-params=tools/lst": no cassette recorded a request of method tools/lst (did you mean tools/list?); recorded: tools/call, tools/list`},
		{"ignore-params with a script alone", []string{"serve", "--match", "ignore-params=tools/call", override}, 2, "no cassette recorded a request of method tools/call: --match applies to cassettes, and none recorded a request"},
		{"bad timing", []string{"serve", "--timing", "slow", db}, 2, `unknown timing "slow"`},
		// An override alone would fail every client's initialize with a
		// bare -32601; refused at the start, saying what is missing.
		{"an override script alone", []string{"serve", override}, 2, "serve: no SOURCE answers initialize: override.yaml has no server section, and an override answers only the calls of the tools, prompts and resources it names"},
		{"an override script alone, watched", []string{"serve", "--http", "127.0.0.1:0", "--watch", override}, 2, "Add server: {name: NAME, version: VERSION} to make a script a whole server, or give a cassette after it"},
		// Modes that only change how recordings answer, given with a script
		// alone, would pass unseen: refused, as --ignore is.
		{"strict with a script alone", []string{"serve", "--match", "strict", override}, 2, `serve: match mode "strict": --match applies to cassettes (.db, .jsonl, .har), and no source is one: a script's when says what matches`},
		{"ignore-params with a script alone, every method", []string{"serve", "--match", "ignore-params", override}, 2, `serve: match mode "ignore-params": --match applies to cassettes`},
		{"recorded timing with a script alone", []string{"serve", "--timing", "recorded", override}, 2, `serve: timing "recorded": --timing applies to cassettes (.db, .jsonl, .har), and no source is one: a script's delay says how long an answer takes`},
		{"bad flag", []string{"serve", "--nope", db}, 2, "flag provided but not defined"},
		{"address in use", []string{"serve", "--http", busy.Addr().String(), db}, 1, "mcpmock: listen on " + busy.Addr().String() + ": address already in use\n"},
		{"call timeout of 0", []string{"serve", "--call-timeout", "0s", db}, 2, "serve: --call-timeout 0s: want a time above 0"},
		{"bad session idle", []string{"serve", "--session-idle", "soon", db}, 2, `invalid value "soon" for flag -session-idle`},
		{"bad HTTP sessions", []string{"serve", "--http", ":0", "--http-sessions", "maybe", db}, 2, `serve: --http-sessions "maybe": want auto, on or off`},
		{"HTTP sessions without --http", []string{"serve", "--http-sessions", "off", db}, 2, "serve: --http-sessions is for --http"},
		{"missing cassette", []string{"serve", "missing.db"}, 1, "cassette does not exist"},
		{"unknown session", []string{"serve", "--session", "s9", db}, 1, `no such session "s9"`},
		{"--session without a cassette", []string{"serve", "--session", "s1", badAsks}, 2, "serve: --session is for cassettes, and no SOURCE is one (.db, .jsonl, .har)"},
		{"--ignore of an empty name", []string{"serve", "--ignore", "", db}, 2, "serve: --ignore wants a member name, got an empty one"},
		{"--ignore without a cassette", []string{"serve", "--ignore", "ts", badAsks}, 2, "serve: --ignore is for cassettes, and no SOURCE is one (.db, .jsonl, .har)"},
		{"a source twice, by another name", []string{"serve", db, alias}, 2, "serve: SOURCE " + alias + " is given twice; the second would never answer"},
		{"journal over a source", []string{"serve", "--journal", db, db}, 2, "--journal " + db + " is also a SOURCE; writing it would destroy it"},
		{"report over a source, by another name", []string{"serve", "--report", alias, db}, 2, "--report " + alias + " is also a SOURCE"},
		{"journal in a missing directory", []string{"serve", "--journal", "/nonexistent/j.jsonl", db}, 1, "journal: open /nonexistent/j.jsonl: no such file or directory"},
		{"check ok", []string{"check", db}, 0, ""},
		{"check a HAR in a zip archive", []string{"check", filepath.Join("..", "..", "store", "testdata", "playwright-chromium.zip")}, 0, ""},
		{"check a .zip that is not one", []string{"check", notZip}, 1, notZip + ": not a zip archive"},
		{"check missing", []string{"check", "missing.jsonl"}, 1, "missing.jsonl"},
		{"check no source", []string{"check"}, 2, "no SOURCE"},
		{"check a prompt's bad sample", []string{"check", badAsks}, 1, badAsks + ":3:13: prompts[0].sample: sample needs maxTokens"},
		{"serve a bad script, named once", []string{"serve", badAsks}, 1, "mcpmock: " + badAsks + ":3:13: prompts[0].sample: sample needs maxTokens"},
		{"watch a bad script, named once", []string{"serve", "--http", "127.0.0.1:0", "--watch", badAsks}, 1, "mcpmock: " + badAsks + ":3:13: prompts[0].sample: sample needs maxTokens"},
		{"check a fault http-200", []string{"check", badFaults}, 1, badFaults + `:3:23: tools[0].answers[0].fault: fault "http-200": 200 is not an error status`},
		{"check a fault http-abc", []string{"check", badFaults}, 1, badFaults + `:5:23: tools[1].answers[0].fault: fault "http-abc": want http- and a three-digit status`},
		{"check a fault http-600", []string{"check", badFaults}, 1, badFaults + `:7:23: tools[2].answers[0].fault: fault "http-600": 600 is not an error status`},
		{"check a fault's bad header name", []string{"check", badFaults}, 1, badFaults + `:9:43: tools[3].answers[0].headers.Retry After: "Retry After" is not a header name`},
		{"check a resource's answer to no elicit", []string{"check", badAsks}, 1, badAsks + ":6:61: resources[0].answers[0].when.elicited: when.elicited matches the client's answer to the resource's elicit, and this resource has none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWith(t, "", tt.args...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
}

// check looks at the kind of every SOURCE before it reads any, as serve
// does: a usage error found half-way used to come after "ok" lines for
// the files before it, and dropped their errors (a missing file's).
func TestCheck_KindsBeforeFiles(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, []byte("server: {name: s, version: \"1\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runWith(t, "", "check", good, "missing.yaml", "x.txt")
	const want = "mcpmock: source \"x.txt\": unknown kind (want a cassette .db, .jsonl, .har or a .zip of a HAR, or a script .yaml, .yml or .json)\n"
	if code != 2 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, nothing checked, and %q", code, stdout, stderr, want)
	}
}

func TestServe_StdioReportStrict(t *testing.T) {
	db := writeTape(t)
	tests := []struct {
		name      string
		stdin     string
		strict    bool
		wantCode  int
		wantUnmat int
		wantUnuse int
		wantSaid  string // on stderr, "" for nothing said
	}{
		{"all used", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a"}}` + "\n", true, 0, 0, 0, ""},
		{"unused, strict", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n", true, 1, 0, 1,
			"--strict: 0 requests unmatched, 1 recorded request unused"},
		{"unused, not strict", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n", false, 0, 0, 1, ""},
		{"unmatched, strict", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"b"}}` + "\n", true, 1, 1, 2,
			"--strict: 1 request unmatched, 2 recorded requests unused"},
		// A call that names no tool matches nothing recorded, as a
		// script's reply to it counts (TestServe_StrictScriptWithoutAnswer).
		{"call without params.name, strict", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}` + "\n", true, 1, 1, 2,
			`- params.name="a"`},
		{"call without params, strict", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}` + "\n", true, 1, 1, 2,
			`- params.name="a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "r.json")
			args := []string{"serve", "--report", report}
			if tt.strict {
				args = append(args, "--strict")
			}
			code, stdout, stderr := runWith(t, tt.stdin, append(args, db)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if tt.wantSaid != "" && !strings.Contains(stderr, tt.wantSaid) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantSaid, stderr)
			}
			if n := strings.Count(stdout, "\n"); n != strings.Count(tt.stdin, "\n") {
				t.Errorf("%d answers for %d requests:\n%s", n, strings.Count(tt.stdin, "\n"), stdout)
			}
			var r replay.Report
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			// The report holds the params hosts sent (unmatched ones
			// with their diffs), credentials among them: only the user
			// may read it, as a cassette.
			if fi, err := os.Stat(report); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("report mode %v (%v), want 0600", fi.Mode().Perm(), err)
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Unmatched) != tt.wantUnmat || len(r.Unused) != tt.wantUnuse {
				t.Errorf("report: %d unmatched, %d unused; want %d, %d\n%s", len(r.Unmatched), len(r.Unused), tt.wantUnmat, tt.wantUnuse, b)
			}
		})
	}
}

// A --report that could not be written at exit is refused before
// anything is served, not after a whole test run against the server; so
// is a --journal that cannot be opened. (The deadline only bounds a
// failing test: the refusal comes at once.)
func TestServe_OutputCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	// Not /dev/null: as root, a report renamed over it replaced it.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"report in a missing directory", []string{"--report", "/nonexistent/r.json"},
			"mcpmock: report: cannot write /nonexistent/r.json at exit: stat /nonexistent: no such file or directory\n"},
		{"report over a directory", []string{"--report", dir},
			"mcpmock: report: cannot write " + dir + " at exit: " + dir + " is a directory\n"},
		{"report over a named pipe", []string{"--report", fifo},
			"mcpmock: report: cannot write " + fifo + " at exit: " + fifo + " is not a regular file\n"},
		{"journal over a directory", []string{"--journal", dir},
			"mcpmock: journal: open " + dir + ": is a directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var errb bytes.Buffer
			args := append(append([]string{"serve", "--http", "127.0.0.1:0"}, tt.args...), writeTape(t))
			err := run(ctx, args, streams{In: strings.NewReader(""), Out: io.Discard, Err: &errb})
			code := cli.ExitCode("mcpmock", err, &errb)
			if code != 1 || errb.String() != tt.want {
				t.Errorf("exit %d, stderr %q; want 1 and %q, before listening", code, errb.String(), tt.want)
			}
		})
	}
}

// A session named twice is replayed once: its requests are not counted
// unused a second time, which --strict would fail on.
func TestServe_SessionNamedTwice(t *testing.T) {
	stdin := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a"}}` + "\n"
	code, _, stderr := runWith(t, stdin, "serve", "--strict", "--session", "s1", "--session", "s1", writeTape(t))
	if code != 0 {
		t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
}

// --ignore NAME: a request that differs from the recording only in that
// member matches; the flag may come after the SOURCE.
func TestServe_Ignore(t *testing.T) {
	stdin := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a","_id":"fresh-1"}}` + "\n"
	dir := t.TempDir()
	rec := filepath.Join(dir, "c.jsonl")
	withID := strings.Replace(tape, `"params":{"name":"a"}`, `"params":{"name":"a","_id":"recorded"}`, 1)
	if err := os.WriteFile(rec, []byte(withID), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runWith(t, stdin, "serve", rec, "--ignore", "_id")
	if code != 0 || !strings.Contains(stdout, `"id":8,"result":{"content":[]}`) {
		t.Errorf("--ignore _id: exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	if _, stdout, _ = runWith(t, stdin, "serve", rec); !strings.Contains(stdout, "no recorded answer") {
		t.Errorf("without --ignore: %s", stdout)
	}
}

func TestSessionIdle(t *testing.T) {
	tests := []struct {
		name     string
		flag     time.Duration
		wantOpts time.Duration
	}{
		{"a duration", 5 * time.Minute, 5 * time.Minute},
		{"0 is never", 0, -1},
		{"negative is never", -time.Second, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessionIdle(tt.flag); got != tt.wantOpts {
				t.Errorf("sessionIdle(%s) = %s, want %s", tt.flag, got, tt.wantOpts)
			}
		})
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{"8080": "127.0.0.1:8080", ":0": "127.0.0.1:0", "0.0.0.0:9": "0.0.0.0:9", "localhost:1": "localhost:1", "127.0.0.1": "127.0.0.1", "localhost": "localhost"} {
		if got := listenAddr(in); got != want {
			t.Errorf("listenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every flag the README's Commands block gives mcpmock is one the command
// takes (its -h lists it).
func TestRun_READMECommands(t *testing.T) {
	peertest.CheckREADMEFlags(t, "mcpmock", func(sub string) string {
		code, out, errOut := runWith(t, "", sub, "-h")
		if code != 0 {
			t.Errorf("mcpmock %s -h: exit %d", sub, code)
		}
		return out + errOut
	})
}

// A damaged cassette or export (here each cut short) is refused with what
// is wrong and where, and the way to what is left of it.
func TestRun_DamagedCassetteHint(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "cut.db")
	// Cut past the root of its tree (page 9 of 4 KiB), which salvage needs;
	// a cut before it says that nothing can be salvaged (TestRun_Usage).
	if err := os.WriteFile(db, shipped[:10*4096], 0o600); err != nil {
		t.Fatal(err)
	}
	jsonl := writeTape(t)
	if err := os.WriteFile(jsonl, []byte(tape[:len(tape)-30]), 0o600); err != nil { // into the last line
		t.Fatal(err)
	}
	for _, cmd := range []string{"serve", "check"} {
		for source, want := range map[string]string{db: db + ": cassette is corrupt: truncated", jsonl: jsonl + ":5: bad JSONL cassette"} {
			code, _, stderr := runWith(t, "", cmd, source)
			if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "mcpspy export --salvage") {
				t.Errorf("mcpmock %s %s: exit %d, stderr %q; want %q and the way to salvage it", cmd, source, code, stderr, want)
			}
		}
	}
}

// Help that is asked for goes to stdout, with exit 0, so that it pages;
// "help COMMAND" is "COMMAND -h".
func TestRun_Help(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // stdout starts so
	}{
		{"-h", []string{"-h"}, "mcpmock is a fake MCP server"},
		{"help", []string{"help"}, "mcpmock is a fake MCP server"},
		{"serve -h", []string{"serve", "-h"}, "Usage: mcpmock serve"},
		{"help serve", []string{"help", "serve"}, "Usage: mcpmock serve"},
		{"help check", []string{"help", "check"}, "Usage: mcpmock check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runWith(t, "", tt.args...)
			if code != 0 || !strings.HasPrefix(stdout, tt.want) || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, stdout starting %q, no stderr", code, stdout, stderr, tt.want)
			}
		})
	}
	if _, out, _ := runWith(t, "", "check", "-h"); !strings.Contains(out, "\nLoads each SOURCE as serve would, without serving") {
		t.Errorf("check -h does not say what check does:\n%s", out)
	}
	if !strings.Contains(func() string { _, out, _ := runWith(t, "", "serve", "-h"); return out }(), "-session-idle") {
		t.Error("serve -h does not name --session-idle")
	}
	code, _, stderr := runWith(t, "", "help", "play")
	if code != 2 || !strings.Contains(stderr, `unknown command "play"`) {
		t.Errorf("help play: exit %d, stderr %q", code, stderr)
	}
}

// check says, under each recording, what mcpmock serving it over HTTP
// does unlike its defaults, as the recorded server did: here, a server
// without sessions. A recording of a server that did as mcpmock does by
// default gets no such line.
func TestCheck_SaysHTTPHabits(t *testing.T) {
	const sessionless = `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-21T10:00:00Z","handshake":{"method":"initialize","protocol_version":"2025-06-18","server_info":{"name":"s","version":"1"}}}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},"http":{"method":"POST","path":"/mcp","stream":"post-body"}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}},"http":{"method":"POST","path":"/mcp","status":200,"stream":"json"}}
`
	path := filepath.Join(t.TempDir(), "sessionless.jsonl")
	if err := os.WriteFile(path, []byte(sessionless), 0o600); err != nil {
		t.Fatal(err)
	}
	shipped := peertest.CopyShipped(t, "everything-http.db")
	code, stdout, stderr := runWith(t, "", "check", path, shipped)
	want := path + ": ok, 1 recorded request\n" +
		"  over HTTP: Streamable HTTP without sessions, as the recorded server answered initialize without an Mcp-Session-Id: none is issued, requests are grouped by connection, and GET and DELETE get 405\n" +
		shipped + ": ok, 4 recorded requests\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", code, stdout, want, stderr)
	}
}

// A recording with no request in it (the wrong file, or one never
// recorded) is nothing to replay: serve refuses it unless a fallback
// server is to fill it, and check says so.
func TestServe_EmptyRecording(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWith(t, "", "serve", empty)
	if want := "mcpmock: " + empty + " holds no recorded request: nothing to replay"; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("serve: exit %d, stderr %q, want 1 and %q", code, stderr, want)
	}
	code, stdout, _ := runWith(t, "", "check", empty)
	if want := empty + ": ok, but it holds no recorded request: nothing to replay\n"; code != 0 || stdout != want {
		t.Errorf("check: exit %d, stdout %q, want 0 and %q", code, stdout, want)
	}
}

func TestRun_Version(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		code, stdout, stderr := runWith(t, "", arg)
		if code != 0 || !strings.HasPrefix(stdout, "mcpmock 0.1 go") || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and \"mcpmock 0.1 go…\"", arg, code, stdout, stderr)
		}
	}
}

// A .json script saved with a byte order mark (Notepad) checks as the
// same script without one.
func TestRun_CheckScriptWithByteOrderMark(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "cassettes", "script-json.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, append([]byte("\ufeff"), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWith(t, "", "check", path); code != 0 {
		t.Errorf("check: exit %d, stderr %q", code, stderr)
	}
}

// A cassette saved without a telling name (mcpspy export x.db > bug) is a
// SOURCE as it is under its own; a file that holds no recording stays an
// unknown kind.
func TestCheck_UnnamedCassette(t *testing.T) {
	for _, u := range peertest.ShippedUnnamed(t) {
		if code, stdout, stderr := runWith(t, "", "check", u.Path); code != 0 || !strings.HasPrefix(stdout, u.Path+": ") {
			t.Errorf("check %s (%s): exit %d, stdout %q, stderr %q", u.Path, u.Shipped, code, stdout, stderr)
		}
	}
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	if err := os.WriteFile(notes, []byte("what the server did\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWith(t, "", "check", notes); code != 2 || !strings.Contains(stderr, "unknown kind") {
		t.Errorf("check notes: exit %d, stderr %q; want 2 and unknown kind", code, stderr)
	}
}

// A whole-server script's reply to a call none of its answers matches
// (an isError result, a -32603 error) is sent as documented and counts
// as unmatched: --strict fails on it, and the report says why.
func TestServe_StrictScriptWithoutAnswer(t *testing.T) {
	script := filepath.Join("..", "..", "replay", "script", "testdata", "no-answer.yaml")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	tests := []struct {
		name     string
		request  string
		wantCode int
		wantOut  string // in the answer
		wantWhy  string // the report's unmatched[0].why; "" for nothing unmatched
	}{
		{"tool, an answer matches", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Oslo"}}}`, 0,
			`"text":"rain"`, ""},
		{"tool, no answer matches", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Bergen"}}}`, 1,
			`"isError":true`, `mcpmock script: no answer of tool "weather" matches the arguments {"city":"Bergen"}; nearest: the answer at line 15: arguments.city is "Bergen", want "Oslo"`},
		{"prompt, no answer matches", `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"Bob"}}}`, 1,
			`"code":-32603`, `mcpmock script: no answer of prompt "greet" matches the arguments {"who":"Bob"}; nearest: the answer at line 22: arguments.who is "Bob", want "Ada"`},
		{"tool the script has not", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wether","arguments":{"city":"Oslo"}}}`, 1,
			`"error":{"code":-32602,"message":"tools/call: unknown tool \"wether\""}`, `the script has no tool "wether"; did you mean "weather"?`},
		{"resource, no answer matches", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///notes.txt"}}`, 1,
			`"code":-32603`, `mcpmock script: no answer of resource "file:///notes.txt" matches the client's answer null`},
		// Requests that name nothing the script could answer.
		{"tool without params.name", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"city":"Oslo"}}}`, 1,
			`"error":{"code":-32602,"message":"tools/call: params.name must be a tool name"}`, `tools/call without params.name: it names no tool`},
		{"tool without params", `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`, 1,
			`"error":{"code":-32602,"message":"tools/call: params.name must be a tool name"}`, `tools/call without params: it names no tool`},
		{"tool whose name is not a string", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":["weather"]}}`, 1,
			`"code":-32602`, `tools/call whose params.name is an array, not a string: it names no tool`},
		{"tool with params not an object", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":["weather"]}`, 1,
			`"error":{"code":-32602,"message":"tools/call: params must be an object"}`, `tools/call whose params are an array, not an object`},
		{"prompt without params.name", `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"arguments":{"who":"Ada"}}}`, 1,
			`"error":{"code":-32602,"message":"prompts/get: params.name must be a prompt name"}`, `prompts/get without params.name: it names no prompt`},
		{"resource without params.uri", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{}}`, 1,
			`"error":{"code":-32602,"message":"resources/read: params.uri must be a resource URI"}`, `resources/read without params.uri: it names no resource`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "r.json")
			code, stdout, stderr := runWith(t, initialize+tt.request+"\n", "serve", "--strict", "--report", report, script)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantOut) {
				t.Errorf("answer lacks %s:\n%s", tt.wantOut, stdout)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var r replay.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if tt.wantWhy == "" {
				if len(r.Unmatched) != 0 {
					t.Errorf("report: %s", b)
				}
				return
			}
			if len(r.Unmatched) != 1 || r.Unmatched[0].Why != tt.wantWhy {
				t.Errorf("report's unmatched, want one saying %s:\n%s", tt.wantWhy, b)
			}
			if !strings.Contains(stderr, "--strict: 1 request unmatched") || !strings.Contains(stderr, "mcpmock: unmatched ") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}
