package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/replay"
)

func runCaptured(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	code = cli.ExitCode("mcpspy", err, &errb)
	return code, out.String(), errb.String()
}

// TestMcpspy_Diff compares the shipped real-peer recordings: the TS SDK
// client ran a longer scenario over stdio than over Streamable HTTP, and
// server-everything answered the requests both made alike.
func TestMcpspy_Diff(t *testing.T) {
	stdio, http := shippedCassette(t, "everything-stdio.db"), shippedCassette(t, "everything-http.db")
	const body = `- tools/call {"arguments":{"a":2,"b":3},"name":"get-sum"}  (a#9)
- tools/call {"arguments":{"location":"New York"},"name":"get-structured-content"}  (a#11)
- tools/call {"name":"get-tiny-image"}  (a#13)
4 the same, 0 answered differently, 3 only in a, 0 only in b
`
	code, out, errOut := runCaptured("diff", stdio, http)
	want := "--- a: " + stdio + " s1 (7 requests)\n+++ b: " + http + " s1 (4 requests)\n" + body
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	// The same two sessions in one cassette, named with --session.
	two := twoSessionCassette(t)
	_, out, _ = runCaptured("diff", "--session", "s1", "--session", "s2", two, two)
	if !strings.HasSuffix(out, body) {
		t.Errorf("--session s1 --session s2:\n%s", out)
	}

	// --all lists the requests both made; --exit-code turns a difference
	// into exit 1, with nothing on stderr.
	code, out, errOut = runCaptured("diff", "--all", "--exit-code", stdio, http)
	if code != 1 || errOut != "" || !strings.Contains(out, "= tools/list  (a#4 b#4)") || !strings.Contains(out, `= initialize  (a#1 b#1)`) {
		t.Errorf("--all --exit-code: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}

	// A cassette against its JSONL export: the same.
	code, out, _ = runCaptured("diff", "--exit-code", stdio, shippedCassette(t, "everything-stdio.jsonl"))
	if code != 0 || !strings.HasSuffix(out, "7 the same, 0 answered differently, 0 only in a, 0 only in b\n") {
		t.Errorf("a cassette against its export: exit %d:\n%s", code, out)
	}

	// A redacted export against its recording: the same, though values
	// in two requests and in tools/list's answer are blanked.
	shared := filepath.Join(t.TempDir(), "shared.jsonl")
	runText(t, "export", "--redact", "message", "--redact", "location", "--redact", "title", "-o", shared, stdio)
	code, out, _ = runCaptured("diff", "--exit-code", stdio, shared)
	if code != 0 || !strings.HasSuffix(out, "7 the same, 0 answered differently, 0 only in a, 0 only in b\n") {
		t.Errorf("a cassette against its redacted export: exit %d:\n%s", code, out)
	}
}

func TestMcpspy_DiffErrors(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	two := twoSessionCassette(t)
	// Two connections of sessionless 2026-07-28 clients, as mcpspy
	// records go-sdk's, but of two clients (their clientInfo differs):
	// diff merges one client's connections, not two clients'.
	conns := filepath.Join(t.TempDir(), "conns.jsonl")
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"host%d","version":"1"}}`
	const http = `"http":{"method":"POST","path":"/mcp","status":200,"request_header":{"Mcp-Protocol-Version":["2026-07-28"]}}`
	var lines strings.Builder
	for i, method := range []string{"tools/list", "tools/call"} {
		fmt.Fprintf(&lines, `{"session":"s%d","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-21T10:00:0%dZ","handshake":{"protocol_version":"2026-07-28","client_info":{"name":"host%d","version":"1"}}}}`+"\n", i+1, i, i)
		fmt.Fprintf(&lines, `{"session":"s%d","seq":1,"dir":"c2s","time":"2026-11-21T10:00:0%dZ","message":{"jsonrpc":"2.0","id":%d,"method":%q,"params":{`+meta+`}},`+http+`}`+"\n", i+1, i, i+1, method, i)
	}
	if err := os.WriteFile(conns, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // the start of stderr's last line
	}{
		{"one cassette", []string{db}, 2, "mcpspy: diff: want two cassettes, A and B, not 1"},
		{"two sessions of one cassette given once", []string{"--session", "s1", "--session", "s2", two}, 2,
			"mcpspy: diff: want two cassettes, A and B, not 1: to compare two sessions of one, give it twice (mcpspy diff --session s1 --session s2 " + two + " " + two + ")"},
		{"three sessions", []string{"--session", "s1", "--session", "s1", "--session", "s1", db, db}, 2, "mcpspy: diff: --session at most twice"},
		{"several sessions, none named", []string{db, two}, 2, "mcpspy: diff: " + two + `: it holds 2 sessions: s1 "everything", s2 "everything-http"; name one with --session`},
		{"two sessionless clients' connections", []string{conns, conns}, 2, "mcpspy: diff: " + conns + " holds 2 sessions, the connections of 2 sessionless 2026-07-28 HTTP clients (s1; s2); name one session of each side's with --session"},
		{"unknown session", []string{"--session", "s1", "--session", "s9", db, two}, 1, "mcpspy: " + two + `: no such session "s9"`},
		{"missing cassette", []string{db, "missing.db"}, 1, "mcpspy: missing.db: cassette does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCaptured(append([]string{"diff"}, tt.args...)...)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if code != tt.wantCode || !strings.HasPrefix(lines[len(lines)-1], tt.wantErr) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and a last line starting %q", code, out, errOut, tt.wantCode, tt.wantErr)
			}
		})
	}
}

// The head counts each side's requests as English does: a side with one
// request, or none, does not read "1 requests".
func TestPrintDiffs_CountsOne(t *testing.T) {
	var out strings.Builder
	diffs := []replay.Difference{{Op: replay.OnlyInA, Request: `tools/list {}`, SeqA: 1}}
	if !printDiffs(&out, "a.db s1", "b.db s1", diffs, diffShown{}) {
		t.Errorf("printDiffs says the sides are the same")
	}
	head := "--- a: a.db s1 (1 request)\n+++ b: b.db s1 (0 requests)\n"
	if !strings.HasPrefix(out.String(), head) {
		t.Errorf("printDiffs wrote\n%s\nwant it to start\n%s", out.String(), head)
	}
}

// A --session NAME that names several sessions (a wrapped server's every
// recording has its name) is not taken for the first of them: diff
// compares one session a side, and asks for its id.
func TestMcpspy_DiffSessionNameOfSeveral(t *testing.T) {
	jsonl := shippedCassette(t, "everything-stdio.jsonl")
	twice := filepath.Join(t.TempDir(), "twice.db")
	for range 2 { // s1 and s2, both named "everything"
		if code, _, stderr := runCaptured("import", "-o", twice, jsonl); code != 0 {
			t.Fatalf("import: exit %d, %s", code, stderr)
		}
	}
	code, out, stderr := runCaptured("diff", "--session", "everything", twice, jsonl)
	want := "mcpspy: diff: --session everything names 2 sessions of " + twice + " (s1,s2); name one by its id\n"
	if code != 2 || out != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, stderr, want)
	}
	if code, out, stderr := runCaptured("diff", "--session", "s2", "--session", "everything", twice, jsonl); code != 0 || !strings.HasPrefix(out, "--- a: "+twice+" s2 ") {
		t.Errorf("by id: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
}
