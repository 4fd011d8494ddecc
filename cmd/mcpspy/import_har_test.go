package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// import of a HAR (a browser's, store/testdata/browser.har) records
// its MCP sessions into the cassette as mcpspy record would: fresh ids
// after the sessions already there, the handshake noted, credentials
// redacted; and says what it took and left, and the ids its sessions
// got, the HAR naming none.
func TestMcpspy_ImportHAR(t *testing.T) {
	har := filepath.Join(peertest.ModuleRoot(), "store", "testdata", "browser.har")
	out := filepath.Join(t.TempDir(), "bug.db")
	if code, _, stderr := runCaptured("import", "-o", out, shippedCassette(t, "everything-stdio.jsonl")); code != 0 {
		t.Fatalf("import of the JSONL: exit %d: %s", code, stderr)
	}
	code, _, stderr := runCaptured("import", "-o", out, har)
	want := "mcpspy: import: 11 messages in 2 sessions from " + har + "; 2 entries carried no MCP traffic and were left out\n" +
		"mcpspy: import: " + har + "'s sessions are s2, s3 in " + out + ", which held sessions already\n"
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
// FILE:LINE:COL for a syntax error or where a cut-short file ends, a file
// that is empty, a member of the wrong kind; never the Go types it is read
// into.
func TestMcpspy_BadHARFile(t *testing.T) {
	tests := []struct {
		name, content, want string // want follows "mcpspy: PATH"
	}{
		{"not JSON", "{\n  \"log\": {\n    \"entries\": [],\n  }\n}", ":4:3: not a HAR file: invalid character '}' looking for beginning of object key string"},
		{"HTML", "<html>", ":1:1: not a HAR file: invalid character '<' looking for beginning of value"},
		{"empty", "", ": not a HAR file: the file is empty"},
		{"cut short", `{"log": {"entries": [{"request": {"method": "PO`, ":1:48: the HAR ends early (cut short?) in entry 1 of log.entries"},
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

// mcpspy's own HAR goes back into a cassette with the notes of answers
// that carried no message, mcpspy's 502 for an upstream that was down
// among them, where they were recorded: on the request's message, on a
// request that carried no message either way; so export, import and
// export again give the same entries.
func TestMcpspy_ImportHARKeepsNotes(t *testing.T) {
	dir := t.TempDir()
	const down = "answered by mcpspy, not the upstream: upstream http://127.0.0.1:3001/mcp is unreachable: connection refused"
	recorded := filepath.Join(dir, "recorded.jsonl")
	jsonl := `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:3001/mcp","start":"2026-11-21T10:00:00Z",` +
		`"bare":[{"time":"2026-11-21T10:00:01Z","http":{"method":"GET","path":"/mcp","status":502,"stream_id":2},"note":"` + down + `"}]}}` + "\n" +
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"},` +
		`"http":{"method":"POST","path":"/mcp","status":502,"response_header":{"Content-Type":["application/json"]},"stream":"post-body","stream_id":1},"note":"` + down + `"}` + "\n"
	if err := os.WriteFile(recorded, []byte(jsonl), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		if code, _, stderr := runCaptured(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	first, second := filepath.Join(dir, "first.har"), filepath.Join(dir, "second.har")
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	run("import", "-o", a, recorded)
	run("export", "--har", "-o", first, a)
	run("import", "-o", b, first)
	run("export", "--har", "-o", second, b)

	tape, err := store.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	s := tape.Sessions[0]
	if len(s.Messages) != 1 || s.Messages[0].Note != down {
		t.Errorf("the POST's note after export and import: %q, want %q", s.Messages[0].Note, down)
	}
	if len(s.Info.Bare) != 1 || s.Info.Bare[0].Note != down {
		t.Errorf("the GET's note after export and import: %+v, want %q", s.Info.Bare, down)
	}
	comments := func(path string) []string {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Log struct {
				Entries []struct {
					Comment string `json:"comment"`
				} `json:"entries"`
			} `json:"log"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range doc.Log.Entries {
			out = append(out, e.Comment)
		}
		return out
	}
	want := []string{"session s1: request seq 1; " + down, "session s1; neither the request nor its answer carried a message; " + down}
	if got := comments(first); !slices.Equal(got, want) {
		t.Fatalf("first export's comments %q, want %q", got, want)
	}
	if got := comments(second); !slices.Equal(got, want) {
		t.Errorf("second export's comments %q, want the first's, %q", got, want)
	}
}
