package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// The findings of brokenExport's session, as show --lint prints them
// under their messages.
const (
	lintUnanswered  = "    lint: warning: tools/call 1 (client) was never answered [unanswered]"
	lintProgress    = "    lint: error: progress 1 after 2 for token 1; it must increase [progress-not-increasing] · see s1 #4"
	lintUnknownID   = "    lint: error: answers id 9, which the client never sent [response-unknown-id]"
	lintListChanged = "    lint: warning: server sends notifications/tools/list_changed, but the server did not declare capabilities.tools.listChanged [undeclared-capability]"
)

// layout reduces show's output to its shape: each message line to its
// seq (the first field), findings and bodies as they are.
func layout(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(l, "    lint: ") || strings.HasPrefix(l, "    {") || strings.HasPrefix(l, "lint: ") {
			out = append(out, l)
			continue
		}
		out = append(out, "#"+strings.Fields(l)[0])
	}
	return out
}

// withBareSession adds to brokenExport a session s2 that never says
// initialize, which lint finds about the session as a whole.
func withBareSession(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(brokenExport(t))
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, `{"session":"s2","info":{"transport":"stdio","upstream":"bare","start":"2026-11-22T10:00:02Z","end":{"time":"2026-11-22T10:00:03Z","reason":"eof"}}}
{"session":"s2","seq":1,"dir":"c2s","time":"2026-11-22T10:00:02.1Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session":"s2","seq":2,"dir":"s2c","time":"2026-11-22T10:00:02.2Z","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
`...)
	path := filepath.Join(t.TempDir(), "two.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMcpspy_ShowLint(t *testing.T) {
	// Real peers' traffic: --lint adds nothing, and the lint filter
	// matches nothing.
	clean := shippedCassette(t, "everything-stdio.db")
	if with, without := showOutput(t, "--lint", clean), showOutput(t, clean); with != without {
		t.Errorf("--lint on a clean recording changed the output:\n%s", with)
	}
	if code, out, errOut := runCaptured("show", "--filter", "lint", clean); code != 0 || out != "" || errOut != "mcpspy: show: the filter matched no message\n" {
		t.Errorf("--filter lint on a clean recording: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	broken, two := brokenExport(t), withBareSession(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"findings under their lines", []string{"--lint", broken}, []string{
			"#1", "#2", "#3", "#4", lintUnanswered, "#5", "#6", lintProgress, "#7", lintUnknownID, "#8", lintListChanged,
		}},
		{"the lint filter", []string{"--filter", "lint:error", broken}, []string{"#6", "#7"}},
		{"rules with |, and !lint", []string{"--lint", "--filter", "lint:unanswered|progress-not-increasing", broken}, []string{
			"#4", lintUnanswered, "#6", lintProgress,
		}},
		{"no finding, nothing printed", []string{"--lint", "--filter", "!lint", broken}, []string{"#1", "#2", "#3", "#5"}},
		{"findings before the body", []string{"--lint", "--body", "--filter", "lint:error kind:response", broken}, []string{
			"#7", lintUnknownID, `    {"jsonrpc":"2.0","id":9,"result":{"content":[]}}`,
		}},
		{"a session's own findings before its first line", []string{"--lint", two}, []string{
			"#s1:1", "#s1:2", "#s1:3", "#s1:4", lintUnanswered, "#s1:5", "#s1:6", lintProgress, "#s1:7", lintUnknownID, "#s1:8", lintListChanged,
			"lint: s2: warning: no initialize, server/discover or per-request protocol version: the client's first request is tools/list at #1 [no-handshake]",
			"#s2:1", "#s2:2",
		}},
		{"--session", []string{"--lint", "--session", "s2", two}, []string{
			"lint: s2: warning: no initialize, server/discover or per-request protocol version: the client's first request is tools/list at #1 [no-handshake]",
			"#1", "#2",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, layout(showOutput(t, tt.args...))); diff != "" {
				t.Errorf("show %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// export --filter takes the lint term through the same filter code.
func TestMcpspy_ExportLintFilter(t *testing.T) {
	out := filepath.Join(t.TempDir(), "findings.jsonl")
	runOK(t, "export", "--filter", "lint:warning", "-o", out, brokenExport(t))
	var notes []string
	for _, m := range readTape(t, out).Sessions[0].Messages {
		notes = append(notes, m.Note)
	}
	want := []string{"exported from broken.jsonl s1 #4", "exported from broken.jsonl s1 #6", "exported from broken.jsonl s1 #7", "exported from broken.jsonl s1 #8"}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMcpspy_ShowLintErrors(t *testing.T) {
	broken := brokenExport(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown rule", []string{"--filter", "lint:unanswerd", broken}, `mcpspy: show: --filter "lint:unanswerd": unknown lint rule or severity "unanswerd"`},
		{"unknown severity", []string{"--filter", "lint:fatal|unanswered", broken}, `mcpspy: show: --filter "lint:fatal|unanswered": unknown lint rule or severity "fatal"`},
		{"tools with lint", []string{"--tools", "--lint", broken}, "mcpspy: show: --tools summarises every tools/call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCaptured(append([]string{"show"}, tt.args...)...)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if code != 2 || out != "" || !strings.HasPrefix(lines[len(lines)-1], tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and a last line starting %q", code, out, errOut, tt.want)
			}
		})
	}
}

// show --follow --lint prints each new message's findings under it, and
// when the session ends, the request it finds unanswered on a line of
// its own.
func TestMcpspy_ShowLintFollow(t *testing.T) {
	frames := readTape(t, brokenExport(t)).Sessions[0].Messages
	db, w, s := liveSession(t)
	record := func(msgs []*store.Message) {
		t.Helper()
		for _, m := range msgs {
			s.Append(m.Dir, time.Now(), m.Frame, nil)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	record(frames[:6])
	show := startShow(t, "--follow", "--lint", db)
	lateUnanswered := "lint: s1:4: warning: tools/call 1 (client) was never answered [unanswered]"
	show.wait(t, lintProgress, 1)
	record(frames[6:])
	show.wait(t, lintListChanged, 1)
	if strings.Contains(show.out.String(), "[unanswered]") {
		t.Fatalf("a call of a session still recording found unanswered:\n%s", show.out.String())
	}
	if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show.wait(t, lateUnanswered, 1)
	out := show.stop(t)
	// Following, a line names its session, as the late finding does.
	want := []string{"#s1:1", "#s1:2", "#s1:3", "#s1:4", "#s1:5", "#s1:6", lintProgress, "#s1:7", lintUnknownID, "#s1:8", lintListChanged, lateUnanswered}
	if diff := cmp.Diff(want, layout(out)); diff != "" {
		t.Errorf("each finding once, the late one last (-want +got):\n%s", diff)
	}
}

// noHandshakeS1 is what lint says of endlessSession's s1 as a whole.
const noHandshakeS1 = "lint: s1: warning: no initialize, server/discover or per-request protocol version: the client's first request is tools/list at #1 [no-handshake]"

// endlessSession writes a session with no end, as a recorder that was
// killed leaves it, and no handshake; as a .jsonl and imported into a .db.
func endlessSession(t *testing.T) (jsonl, db string) {
	t.Helper()
	dir := t.TempDir()
	jsonl, db = filepath.Join(dir, "endless.jsonl"), filepath.Join(dir, "endless.db")
	b := `{"session":"s1","info":{"transport":"stdio","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
`
	if err := os.WriteFile(jsonl, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK(t, "import", "-o", db, jsonl)
	return jsonl, db
}

// Without --follow the cassette holds all there is: a session with no end
// gets its own findings before its first line, as mcpspy lint finds them,
// and no process records it, so its unanswered request is one too.
func TestMcpspy_ShowLintNoEnd(t *testing.T) {
	jsonl, db := endlessSession(t)
	unanswered := "    lint: warning: tools/list 1 (client) has no answer before the recording broke off (no end recorded) [unanswered]"
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"jsonl", []string{"--lint", jsonl}, []string{noHandshakeS1, "#1", unanswered}},
		{"db", []string{"--lint", db}, []string{noHandshakeS1, "#1", unanswered}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, layout(showOutput(t, tt.args...))); diff != "" {
				t.Errorf("show %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// Under --follow a session with no end is still being recorded: a client
// may yet say initialize, a server yet answer. What needs the whole
// session waits for its end, and then comes on lines of their own.
func TestMcpspy_ShowLintFollowNoEnd(t *testing.T) {
	db, w, s := liveSession(t)
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show := startShow(t, "--follow", "--lint", db)
	show.wait(t, "tools/list", 1)
	if strings.Contains(show.out.String(), "[no-handshake]") {
		t.Fatalf("a session still recording judged before its end:\n%s", show.out.String())
	}
	if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	unanswered := "lint: s1:1: warning: tools/list 1 (client) was never answered [unanswered]"
	show.wait(t, unanswered, 1)
	if diff := cmp.Diff([]string{"#s1:1", noHandshakeS1, unanswered}, layout(show.stop(t))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
