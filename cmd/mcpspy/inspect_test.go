package main

import (
	"bytes"
	"context"
	"github.com/mcptape/mcptape/internal/cli"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunInspect_Errors(t *testing.T) {
	dir := t.TempDir()
	notCassette := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(notCassette, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"inspect"}, 2, "want exactly one CASSETTE"},
		{"two files", []string{"inspect", "a.db", "b.db"}, 2, "want exactly one CASSETTE"},
		{"bad flag", []string{"inspect", "--tail", "a.db"}, 2, "flag provided but not defined"},
		{"follow a jsonl", []string{"inspect", "--follow", "x.jsonl"}, 2, "--follow needs a .db cassette"},
		{"missing file", []string{"inspect", filepath.Join(dir, "nope.db")}, 1, "cassette does not exist"},
		{"foreign file", []string{"inspect", notCassette}, 1, "not an mcptape cassette"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), tt.args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			var stderr bytes.Buffer
			if code := cli.ExitCode("mcpspy", err, &stderr); code != tt.code {
				t.Errorf("exit %d, want %d (%v)", code, tt.code, err)
			}
			msg := strings.TrimSuffix(stderr.String(), "\n")
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("stderr %q: want one line with %q", msg, tt.want)
			}
		})
	}
}
