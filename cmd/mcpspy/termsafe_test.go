package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A recording is the peers' words, and someone else's recording may be
// hostile: a tool name with a newline and a shell command after it, an
// id with a newline, a server name and a malformed frame with terminal
// escape sequences. Every text command prints each message on its line,
// with nothing a terminal or a shell would act on; the resend script run
// by sh creates no file.
func TestMcpspy_HostileRecordingPrintsSafely(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "PWNED")
	tape := filepath.Join(dir, "hostile.jsonl")
	lines := `{"session":"s1","info":{"transport":"stdio","upstream":"true","start":"2026-11-21T10:00:00Z","handshake":{"protocol_version":"2025-06-18","server_info":{"name":"evil\u001b[2J","version":"1"}}}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":"a\nb","method":"tools/call","params":{"name":"x\ntouch ` + pwned + `"}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.1Z","raw":"not json \u001b[31mred\u001b[0m\u202e"}
`
	if err := os.WriteFile(tape, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args  []string
		lines int
	}{
		{[]string{"show", tape}, 2},
		{[]string{"show", "--body", tape}, 4},
		{[]string{"show", "--resend", tape}, 2},
		{[]string{"ls", tape}, 1},
		// The call, whose id holds a newline, is unanswered in a session
		// with no end that no recorder runs: a finding of its own.
		{[]string{"lint", tape}, 3},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:len(tt.args)-1], " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			_ = run(context.Background(), tt.args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}) // lint exits 1: it found errors
			got := out.String()
			if n := strings.Count(got, "\n"); n != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tt.lines, got)
			}
			if strings.ContainsAny(got, "\x1b\u202e") {
				t.Errorf("printed an escape sequence or a bidirectional override raw: %q", got)
			}
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "touch ") {
					t.Errorf("a recorded tool name made a line of its own: %q", l)
				}
			}
			if tt.args[1] == "--resend" {
				sh := exec.Command("sh")
				sh.Stdin = strings.NewReader(got)
				_ = sh.Run() // the recorded server is `true`: it answers nothing
				if _, err := os.Stat(pwned); err == nil {
					t.Errorf("sh ran a command the recording put in a tool name:\n%s", got)
				}
			}
		})
	}
}
