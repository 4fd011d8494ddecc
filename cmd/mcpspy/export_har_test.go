package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// harSummary is what the CLI tests read of a HAR: creator, pages, and per
// entry the method, status and request seq.
type harSummary struct {
	Log struct {
		Creator struct{ Name, Version string }
		Pages   []struct{ ID string }
		Entries []struct {
			Request struct {
				Method   string
				PostData *struct{ Text string }
			}
			Response struct{ Status int }
			MCPTape  struct {
				Session    string
				RequestSeq uint64 `json:"request_seq"`
			} `json:"_mcptape"`
		}
	}
}

func readHAR(tb testing.TB, doc string) harSummary {
	tb.Helper()
	var h harSummary
	if err := json.Unmarshal([]byte(doc), &h); err != nil {
		tb.Fatalf("not a HAR: %v\n%.300s", err, doc)
	}
	return h
}

// entryLines are the entries an entry in a few words: "s1 POST 200 seq 1".
func entryLines(h harSummary) []string {
	var out []string
	for _, e := range h.Log.Entries {
		out = append(out, strings.Join([]string{e.MCPTape.Session, e.Request.Method, strconv.Itoa(e.Response.Status), "seq", strconv.FormatUint(e.MCPTape.RequestSeq, 10)}, " "))
	}
	return out
}

func TestMcpspy_ExportHAR(t *testing.T) {
	httpDB := shippedCassette(t, "everything-http.db")
	recorded := []string{"s1 POST 200 seq 1", "s1 POST 202 seq 3", "s1 POST 200 seq 4", "s1 GET 200 seq 0", "s1 POST 200 seq 6", "s1 POST 200 seq 8", "s1 DELETE 200 seq 0"}
	tests := []struct {
		name        string
		args        []string // before the cassette
		cassette    string
		wantEntries []string
		wantStderr  string
	}{
		{"the HTTP recording", nil, httpDB, recorded, ""},
		{"its .jsonl twin", nil, shippedCassette(t, "everything-http.jsonl"), recorded, ""},
		{"by session name", []string{"--session", "everything-http"}, httpDB, recorded, ""},
		{"a stdio session is named and left out", nil, twoSessionCassette(t),
			[]string{"s2 POST 200 seq 1", "s2 POST 202 seq 3", "s2 POST 200 seq 4", "s2 GET 200 seq 0", "s2 POST 200 seq 6", "s2 POST 200 seq 8", "s2 DELETE 200 seq 0"},
			"mcpspy: export: left out of the HAR, not HTTP or WebSocket: s1 (stdio)\n"},
		{"--session picks the HTTP one: nothing left out", []string{"--session", "s2"}, twoSessionCassette(t),
			[]string{"s2 POST 200 seq 1", "s2 POST 202 seq 3", "s2 POST 200 seq 4", "s2 GET 200 seq 0", "s2 POST 200 seq 6", "s2 POST 200 seq 8", "s2 DELETE 200 seq 0"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"export", "--har"}, tt.args...), tt.cassette)
			code, stdout, stderr := runCaptured(args...)
			if code != 0 || stderr != tt.wantStderr {
				t.Fatalf("exit %d, stderr %q; want 0, %q", code, stderr, tt.wantStderr)
			}
			h := readHAR(t, stdout)
			if d := cmp.Diff(tt.wantEntries, entryLines(h)); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
			if h.Log.Creator.Name != "mcpspy" || h.Log.Creator.Version != "0.1" {
				t.Errorf("creator %+v, want mcpspy 0.1", h.Log.Creator)
			}

			// -o writes the same bytes, privately, and nothing to stdout.
			out := filepath.Join(t.TempDir(), "traffic.har")
			code, stdoutO, stderrO := runCaptured(append(append([]string{"export", "--har", "-o", out}, tt.args...), tt.cassette)...)
			if code != 0 || stdoutO != "" || stderrO != tt.wantStderr {
				t.Fatalf("-o: exit %d, stdout %q, stderr %q", code, stdoutO, stderrO)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != stdout {
				t.Errorf("-o wrote other bytes than stdout got")
			}
			if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
				t.Errorf("-o file mode %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// --redact blanks values in the HAR as in any export, and headers in
// every entry, those of the requests without messages (the session's
// bare exchanges: its GET stream and DELETE) too.
func TestMcpspy_ExportHARRedact(t *testing.T) {
	code, stdout, stderr := runCaptured("export", "--har", "--redact", "message", "--redact", "user-agent", shippedCassette(t, "everything-http.db"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The echo's message, and the User-Agent of each request: those that
	// carried messages, and the session's bare exchanges.
	if want := "mcpspy: export: redacted 15 values in 12 messages and the info of 1 session\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	h := readHAR(t, stdout)
	echo := ""
	for _, e := range h.Log.Entries {
		if e.Request.PostData != nil && strings.Contains(e.Request.PostData.Text, `"echo"`) {
			echo = e.Request.PostData.Text
		}
	}
	if !strings.Contains(echo, `"message":"[redacted]"`) || strings.Contains(stdout, `\"message\":\"hello from mcptape\"`) {
		t.Errorf("the echo call's message is not redacted: %s", echo)
	}
	if n := strings.Count(stdout, `"value": "node"`); n != 0 || !strings.Contains(stdout, `"DELETE"`) {
		t.Errorf("the client's User-Agent (node) is in the HAR %d times; want none, and the DELETE's entry", n)
	}
}

func TestMcpspy_ExportHARErrors(t *testing.T) {
	dir := t.TempDir()
	stdio := shippedCassette(t, "everything-stdio.db")
	httpDB := shippedCassette(t, "everything-http.db")
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.har")
	two := twoSessionCassette(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // the last stderr line, whole
	}{
		{"a stdio-only cassette", []string{"--har", "-o", out, stdio}, 1,
			"mcpspy: export --har: " + stdio + ": no HTTP or WebSocket session to write, only s1 (stdio)"},
		{"--session names a stdio session", []string{"--har", "--session", "s1", "-o", out, two}, 1,
			"mcpspy: export --har: " + two + ": no HTTP or WebSocket session to write, only s1 (stdio)"},
		{"no session at all", []string{"--har", "-o", out, empty}, 1,
			"mcpspy: export --har: " + empty + " holds no session"},
		{"an unknown session", []string{"--har", "--session", "s9", "-o", out, httpDB}, 1,
			"mcpspy: " + httpDB + `: no such session "s9" (it holds s1 "everything-http")`},
		{"with --script", []string{"--har", "--script", httpDB}, 2,
			"mcpspy: export: --har and --script do not go together: each writes a different file"},
		{"with --salvage", []string{"--har", "--salvage", httpDB}, 2,
			"mcpspy: export: --har does not salvage: export --salvage to a .jsonl, then export that with --har"},
		{"with --filter", []string{"--har", "--filter", "tool:echo", httpDB}, 2,
			"mcpspy: export: --har writes whole HTTP exchanges: pick sessions with --session, not messages with --filter"},
		{"with an empty --filter", []string{"--har", "--filter", "", httpDB}, 2,
			"mcpspy: export: --har writes whole HTTP exchanges: pick sessions with --session, not messages with --filter"},
		{"with --timing", []string{"--har", "--timing", "recorded", httpDB}, 2,
			"mcpspy: export: --timing is for --script: a JSONL export keeps every message's time"},
		{"into a .db", []string{"--har", "-o", filepath.Join(dir, "x.db"), httpDB}, 2,
			"mcpspy: export: -o " + filepath.Join(dir, "x.db") + ": --har writes a HAR, and mcpspy reads a .db as a recording: name it .har"},
		{"into a .jsonl", []string{"--har", "-o", filepath.Join(dir, "x.jsonl"), httpDB}, 2,
			"mcpspy: export: -o " + filepath.Join(dir, "x.jsonl") + ": --har writes a HAR, and mcpspy reads a .jsonl as a recording: name it .har"},
		{"over the cassette", []string{"--har", "-o", httpDB, httpDB}, 2,
			"mcpspy: export: -o " + httpDB + " is the CASSETTE being exported; writing it would destroy it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCaptured(append([]string{"export"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d: %s", code, tt.wantCode, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if got := lines[len(lines)-1]; got != tt.wantErr {
				t.Errorf("stderr ends %q, want %q", got, tt.wantErr)
			}
			if stdout != "" {
				t.Errorf("wrote to stdout: %.200s", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}
