package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An answer that differs in more leaves than diff shows says which flag
// shows the rest, and --all-leaves shows them all.
func TestMcpspy_DiffAllLeaves(t *testing.T) {
	dir := t.TempDir()
	write := func(name, prefix string) string {
		var tools []string
		for i := range 10 {
			tools = append(tools, fmt.Sprintf(`{"name":"%s%d"}`, prefix, i))
		}
		path := filepath.Join(dir, name)
		text := `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}` + "\n" +
			`{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}` + "\n" +
			`{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:01Z","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[` + strings.Join(tools, ",") + `]}}}` + "\n"
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("a.jsonl", "t"), write("b.jsonl", "u")
	head := "--- a: " + a + " s1 (1 request)\n+++ b: " + b + " s1 (1 request)\n~ tools/list  (a#1 b#1)\n"
	var six, all []string
	for i := range 10 {
		all = append(all, fmt.Sprintf(`    - result.tools[%d].name="t%d"`, i, i))
	}
	for i := range 10 {
		all = append(all, fmt.Sprintf(`    + result.tools[%d].name="u%d"`, i, i))
	}
	six = append(six, all[:6]...)
	six = append(six, "    … 14 more (--all-leaves shows them)")
	const tail = "\n0 the same, 1 answered differently, 0 only in a, 0 only in b\n"

	code, out, _ := runCaptured("diff", a, b)
	if want := head + strings.Join(six, "\n") + tail; code != 0 || out != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}
	code, out, _ = runCaptured("diff", "--all-leaves", a, b)
	if want := head + strings.Join(all, "\n") + tail; code != 0 || out != want {
		t.Errorf("--all-leaves: exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}
}
