package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// An --ignore NAME that names no member compared leaves nothing out, and
// says so: diff prints a leaf by its path (result.content[0].text), and a
// user who gives that path, or misspells a name, would otherwise see the
// difference stay with no word why. A name that does name a member is
// taken in silence.
func TestMcpspy_DiffIgnoreNamesNothing(t *testing.T) {
	plain, _ := runText(t, "export", shippedCassette(t, "everything-stdio.db"))
	edited := strings.Replace(string(plain), `"text":"Echo: hello from mcptape"`, `"text":"Echo: something else"`, 1)
	if edited == string(plain) {
		t.Fatal("the shipped cassette's echo answer was not found")
	}
	changed := filepath.Join(t.TempDir(), "changed.jsonl")
	if err := os.WriteFile(changed, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	const prefix = "mcpspy: diff: --ignore "
	for _, tt := range []struct {
		name, ignore string
		code         int
		wantStderr   string
	}{
		{"a member's name", "text", 0, ""},
		{"the path diff prints", "result.content[0].text", 1,
			prefix + "result.content[0].text names no member of the params, results or errors compared: it left nothing out (--ignore takes a member's name, not its path: --ignore text)\n"},
		{"the name in another case", "Text", 1,
			prefix + "Text names no member of the params, results or errors compared: it left nothing out (did you mean --ignore text?)\n"},
		{"a name nothing is near", "generatedAt", 1,
			prefix + "generatedAt names no member of the params, results or errors compared: it left nothing out\n"},
		// jsonrpc, id and method are the envelope's, which --ignore
		// never reaches.
		{"an envelope member", "jsonrpc", 1,
			prefix + "jsonrpc names no member of the params, results or errors compared: it left nothing out\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCaptured("diff", "--exit-code", "--ignore", tt.ignore, shippedCassette(t, "everything-stdio.db"), changed)
			if code != tt.code || stderr != tt.wantStderr {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, tt.code, tt.wantStderr)
			}
		})
	}
}

// rerun says the same of --ignore, once, after the comparisons: against
// server-everything, the recording's own server.
func TestMcpspy_RerunIgnoreNamesNothing(t *testing.T) {
	t.Parallel()
	everything := peertest.ServerEverything(t, "stdio")
	code, stdout, stderr := runCaptured(append([]string{"rerun", "--exit-code", "--ignore", "text", "--ignore", "result.content[0].text",
		shippedCassette(t, "everything-stdio.db"), "--"}, everything...)...)
	want := "mcpspy: rerun: --ignore result.content[0].text names no member of the params, results or errors compared: it left nothing out (--ignore takes a member's name, not its path: --ignore text)\n"
	if code != 0 || !strings.HasSuffix(stdout, "\n7 the same, 0 answered differently, 0 only in a, 0 only in b\n") || !strings.HasSuffix(stderr, want) || strings.Contains(stderr, "--ignore text names") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant stderr to end %q, and nothing of --ignore text", code, stdout, stderr, want)
	}
}
