package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/lint"
)

// brokenExport writes a JSONL export of a session whose server answers an
// id nobody sent, whose progress goes backwards and which leaves a call
// unanswered, and returns its path.
func brokenExport(t *testing.T) string {
	t.Helper()
	lines := []string{
		`{"session":"s1","info":{"transport":"stdio","upstream":"broken-server","start":"2026-11-22T10:00:00Z","end":{"time":"2026-11-22T10:00:01Z","reason":"eof"}}}`,
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-22T10:00:00.1Z","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}`,
		`{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-22T10:00:00.2Z","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}`,
		`{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-22T10:00:00.3Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}`,
		`{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-22T10:00:00.4Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}}`,
		`{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-22T10:00:00.5Z","message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}}`,
		`{"session":"s1","seq":6,"dir":"s2c","time":"2026-11-22T10:00:00.6Z","message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}`,
		`{"session":"s1","seq":7,"dir":"s2c","time":"2026-11-22T10:00:00.7Z","message":{"jsonrpc":"2.0","id":9,"result":{"content":[]}}}`,
		`{"session":"s1","seq":8,"dir":"s2c","time":"2026-11-22T10:00:00.8Z","message":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}`,
	}
	path := filepath.Join(t.TempDir(), "broken.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMcpspy_Lint(t *testing.T) {
	// Real peers' traffic: nothing to say.
	code, out, errOut := runCaptured("lint", shippedCassette(t, "everything-stdio.db"), shippedCassette(t, "everything-http.jsonl"))
	if code != 0 || out != "" || errOut != "mcpspy: lint: no findings in 2 sessions\n" {
		t.Errorf("shipped cassettes: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	broken := brokenExport(t)
	code, out, errOut = runCaptured("lint", broken)
	want := broken + " s1:4: warning: tools/call 1 (client) was never answered [unanswered]\n" +
		broken + " s1:6: error: progress 1 after 2 for token 1; it must increase [progress-not-increasing]\n" +
		broken + " s1:7: error: answers id 9, which the client never sent [response-unknown-id]\n" +
		broken + " s1:8: warning: server sends notifications/tools/list_changed, but the server did not declare capabilities.tools.listChanged [undeclared-capability]\n"
	if code != 1 || out != want || errOut != "mcpspy: lint: 2 errors, 2 warnings in 1 session\n" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	// Skipping the errors leaves warnings, which fail only with --strict;
	// --min hides what is below it.
	skipErrors := []string{"--skip", "progress-not-increasing", "--skip", "response-unknown-id"}
	if code, _, errOut = runCaptured(append(append([]string{"lint"}, skipErrors...), broken)...); code != 0 || errOut != "mcpspy: lint: 2 warnings in 1 session\n" {
		t.Errorf("errors skipped: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ = runCaptured(append(append([]string{"lint", "--strict"}, skipErrors...), broken)...); code != 1 {
		t.Errorf("--strict with warnings: exit %d, want 1", code)
	}
	if code, out, _ = runCaptured("lint", "--min", "error", broken); code != 1 || strings.Count(out, "\n") != 2 || strings.Contains(out, "warning") {
		t.Errorf("--min error: exit %d:\n%s", code, out)
	}

	// --json: one object per finding, with the file.
	_, out, _ = runCaptured("lint", "--json", broken)
	var first jsonFinding
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first); err != nil || first != (jsonFinding{File: broken, Session: "s1", Seq: 4, Rule: "unanswered", Severity: "warning", Message: "tools/call 1 (client) was never answered"}) {
		t.Errorf("--json first line %+v (%v):\n%s", first, err, out)
	}

	// --rules lists every rule a --skip takes.
	_, out, _ = runCaptured("lint", "--rules")
	for _, name := range []string{"unanswered", "progress-not-increasing", "http-method-header"} {
		if !strings.Contains(out, "\n"+name+" ") && !strings.HasPrefix(out, name+" ") {
			t.Errorf("--rules lacks %s:\n%s", name, out)
		}
	}
}

func TestMcpspy_LintErrors(t *testing.T) {
	broken := brokenExport(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no cassette", []string{"lint"}, 2, "lint: no CASSETTE"},
		{"unknown rule", []string{"lint", "--skip", "nope", broken}, 2, `--skip "nope": no such rule`},
		{"a rule near one", []string{"lint", "--skip", "http-method-headr", broken}, 2, `no such rule (mcpspy lint --rules lists them); did you mean http-method-header?`},
		{"bad severity", []string{"lint", "--min", "fatal", broken}, 2, `--min "fatal": want info, warning or error`},
		{"unknown session", []string{"lint", "--session", "s9", broken}, 1, `s9`},
		{"one unknown session of two", []string{"lint", "--session", "s1", "--session", "s9", broken}, 1, `no such session "s9"`},
		{"--rules with a cassette", []string{"lint", "--rules", broken}, 2, "lint: --rules lists the rules and reads no CASSETTE, got 1 arguments"},
		{"not a cassette", []string{"lint", filepath.Join(t.TempDir(), "missing.db")}, 1, "missing.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCaptured(tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

func TestFindingCounts(t *testing.T) {
	tests := []struct {
		name   string
		counts [3]int
		want   string
	}{
		{"none", [3]int{}, "no findings"},
		{"one of each", [3]int{lint.Error: 1, lint.Warning: 1, lint.Info: 1}, "1 error, 1 warning, 1 info"},
		{"info is uncountable, as in the inspector", [3]int{lint.Info: 3}, "3 info"},
		{"plurals", [3]int{lint.Error: 2, lint.Warning: 5}, "2 errors, 5 warnings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findingCounts(tt.counts); got != tt.want {
				t.Errorf("findingCounts(%v) = %q, want %q", tt.counts, got, tt.want)
			}
		})
	}
}

// --session repeated checks those sessions, as export and mcpmock take
// it; each cassette is still judged whole.
func TestMcpspy_LintSessions(t *testing.T) {
	broken := readLines(t, brokenExport(t))
	var lines []string
	for _, id := range []string{"s1", "s2", "s3"} {
		for _, l := range broken {
			lines = append(lines, strings.Replace(l, `{"session":"s1",`, `{"session":"`+id+`",`, 1))
		}
	}
	three := filepath.Join(t.TempDir(), "three.jsonl")
	if err := os.WriteFile(three, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sessions []string
		want     []string // the sessions with findings, in order
		summary  string
	}{
		{"all", nil, []string{"s1", "s2", "s3"}, "mcpspy: lint: 6 errors, 6 warnings in 3 sessions\n"},
		{"one", []string{"s2"}, []string{"s2"}, "mcpspy: lint: 2 errors, 2 warnings in 1 session\n"},
		{"two", []string{"s3", "s1"}, []string{"s1", "s3"}, "mcpspy: lint: 4 errors, 4 warnings in 2 sessions\n"},
		{"one twice", []string{"s3", "s3"}, []string{"s3"}, "mcpspy: lint: 2 errors, 2 warnings in 1 session\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"lint"}
			for _, s := range tt.sessions {
				args = append(args, "--session", s)
			}
			code, out, errOut := runCaptured(append(args, three)...)
			var got []string
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				session, _, _ := strings.Cut(strings.TrimPrefix(l, three+" "), ":")
				if len(got) == 0 || got[len(got)-1] != session {
					got = append(got, session)
				}
			}
			if code != 1 || !slices.Equal(got, tt.want) || errOut != tt.summary {
				t.Errorf("exit %d, sessions %v, stderr %q; want exit 1, %v, %q\n%s", code, got, errOut, tt.want, tt.summary, out)
			}
		})
	}
}

// A cassette that cannot be read does not stop lint: the others are
// checked, and its error comes after the summary, with exit 1.
func TestMcpspy_LintSeveralFiles(t *testing.T) {
	good, broken := shippedCassette(t, "everything-stdio.db"), brokenExport(t)
	notCassette := notesFile(t, t.TempDir())
	missing := filepath.Join(t.TempDir(), "missing.db")
	tests := []struct {
		name      string
		files     []string
		wantOut   int // lines
		wantErr   []string
		unwantErr string
	}{
		{"a bad one between good ones", []string{good, notCassette, broken}, 4, []string{
			"mcpspy: lint: 2 errors, 2 warnings in 2 sessions; 1 cassette not read\n",
			"mcpspy: " + notCassette + ": not an mcptape cassette",
		}, ""},
		{"two bad ones after a good one", []string{good, missing, notCassette}, 0, []string{
			"mcpspy: lint: no findings in 1 session; 2 cassettes not read\nmcpspy: " + missing,
			"\nmcpspy: " + notCassette + ": not an mcptape cassette",
		}, ""},
		{"only bad ones", []string{missing, notCassette}, 0, []string{"mcpspy: " + missing, "\nmcpspy: " + notCassette + ": not an mcptape cassette"}, "mcpspy: lint:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCaptured(append([]string{"lint"}, tt.files...)...)
			if code != 1 || strings.Count(out, "\n") != tt.wantOut {
				t.Errorf("exit %d, want 1, and %d lines of findings:\n%s", code, tt.wantOut, out)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.unwantErr != "" && strings.Contains(errOut, tt.unwantErr) {
				t.Errorf("stderr has %q:\n%s", tt.unwantErr, errOut)
			}
		})
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
