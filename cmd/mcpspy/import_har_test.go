package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// import of a HAR (a browser's, store/testdata/browser.har) records
// its MCP sessions into the cassette as mcpspy record would: fresh ids
// after the sessions already there, the handshake noted, credentials
// redacted; and says what it took and left.
func TestMcpspy_ImportHAR(t *testing.T) {
	har := filepath.Join(peertest.ModuleRoot(), "store", "testdata", "browser.har")
	out := filepath.Join(t.TempDir(), "bug.db")
	if code, _, stderr := runCaptured("import", "-o", out, shippedCassette(t, "everything-stdio.jsonl")); code != 0 {
		t.Fatalf("import of the JSONL: exit %d: %s", code, stderr)
	}
	code, _, stderr := runCaptured("import", "-o", out, har)
	want := "mcpspy: import: 11 messages in 2 sessions from " + har + "; 2 entries carried no MCP traffic and were left out\n"
	if code != 0 || stderr != want {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	tape, err := store.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 3 {
		t.Fatalf("%d sessions, want the JSONL's and the HAR's two", len(tape.Sessions))
	}
	s := tape.Sessions[1]
	if s.Info.ID != "s2" || string(s.Info.Handshake.ServerInfo) != `{"name":"remote-tools","version":"3.1.0"}` || s.Info.Handshake.ProtocolVersion != "2025-11-25" {
		t.Errorf("the HAR's first session: id %s, handshake %+v", s.Info.ID, s.Info.Handshake)
	}
	if a := s.Messages[0].HTTP.RequestHeader.Get("Authorization"); a != store.Redacted {
		t.Errorf("Authorization %q, want it redacted", a)
	}
}

// A HAR import's bad input: no MCP traffic, flags for a HAR given with a
// JSONL, flags that contradict each other. Each says what, and writes
// nothing.
func TestMcpspy_ImportHARRefusals(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.har")
	if err := os.WriteFile(page, []byte(`{"log":{"entries":[{"startedDateTime":"2026-11-27T10:00:00Z","request":{"method":"GET","url":"https://example.com/"},"response":{"status":200,"content":{"mimeType":"text/html","text":"<p>hi"}}}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join(peertest.ModuleRoot(), "store", "testdata", "browser.har")
	out := filepath.Join(dir, "out.db")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no MCP traffic", []string{"import", "-o", out, page}, 1, "mcpspy: import: " + page + " has no MCP traffic (1 entry, none a JSON-RPC message, an MCP header or a legacy SSE endpoint)\n"},
		{"--redact with a JSONL", []string{"import", "--redact", "q", "-o", out, shippedCassette(t, "everything-stdio.jsonl")}, 2, "--redact is for a HAR file"},
		{"--redact and --no-redact", []string{"import", "--no-redact", "--redact", "q", "-o", out, har}, 2, "--redact and --no-redact contradict each other"},
		{"a bad --redact-value", []string{"import", "--redact-value", "(", "-o", out, har}, 2, "--redact-value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCaptured(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused import left %s behind (%v)", out, err)
			}
		})
	}
}

// Every command that reads a recording reads a HAR as it is, as it reads
// a JSONL export: ls, show, lint, export (JSONL, or a script); and what
// would write a cassette or a JSONL under a .har name, or follow one, is
// refused.
func TestMcpspy_ReadsHAR(t *testing.T) {
	har := filepath.Join(peertest.ModuleRoot(), "store", "testdata", "browser.har")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout on success, in stderr on failure
	}{
		{"ls", []string{"ls", har}, 0, "s1\t-\tstreamable-http\t2026-11-27 10:00:00\t9 msgs\tremote-tools@3.1.0"},
		{"show", []string{"show", har}, 0, "tools/call search"},
		{"lint", []string{"lint", har}, 0, "[no-handshake]"},
		{"export", []string{"export", har}, 0, `"method": "initialize"`},
		{"export --script", []string{"export", "--script", har}, 0, "name: search"},
		{"diff with the cassette it was exported from", []string{"diff", shippedCassette(t, "everything-http.har"), shippedCassette(t, "everything-http.db")}, 0, "4 the same, 0 answered differently"},
		{"export to a .har name", []string{"export", "-o", filepath.Join(dir, "x.har"), har}, 2, "a .har is read as a HAR"},
		{"import into a .har", []string{"import", "-o", filepath.Join(dir, "x.har"), har}, 2, "a .har is read as a HAR, and a cassette is a bbolt file"},
		{"follow a HAR", []string{"show", "--follow", har}, 2, "--follow needs a .db cassette"},
		{"salvage a HAR", []string{"export", "--salvage", har}, 1, "a HAR is read whole or not at all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCaptured(tc.args...)
			got := stdout
			if tc.code != 0 {
				got = stderr
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}

// A HAR that cannot be read says where and what, in the user's terms:
// FILE:LINE:COL for a syntax error, a file that is empty or cut short, a
// member of the wrong kind; never the Go types it is read into.
func TestMcpspy_BadHARFile(t *testing.T) {
	tests := []struct {
		name, content, want string // want follows "mcpspy: PATH"
	}{
		{"not JSON", "{\n  \"log\": {\n    \"entries\": [],\n  }\n}", ":4:3: not a HAR file: invalid character '}' looking for beginning of object key string"},
		{"HTML", "<html>", ":1:1: not a HAR file: invalid character '<' looking for beginning of value"},
		{"empty", "", ": not a HAR file: the file is empty"},
		{"cut short", `{"log": {"entries": [{"request": {"method": "PO`, ": not a HAR file: the file ends early (cut short?)"},
		{"entries not an array", `{"log": {"entries": "nope"}}`, ":1:26: not a HAR file: log.entries: want an array, got a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.har")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"ls", path}, {"import", "-o", filepath.Join(t.TempDir(), "x.db"), path}} {
				code, _, stderr := runCaptured(args...)
				if want := "mcpspy: " + path + tt.want + "\n"; code != 1 || stderr != want {
					t.Errorf("%s: exit %d, stderr %q; want 1 and %q", args[0], code, stderr, want)
				}
			}
		})
	}
}
