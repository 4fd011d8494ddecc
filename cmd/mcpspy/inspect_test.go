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

// inspect's CASSETTE "-" is read from stdin, as show's is (the keys come
// from the terminal, as less takes them): a HAR piped to it is read as
// show reads one, up to the terminal this test has not; what a pipe
// cannot hold (a zip) is refused before the terminal is asked for, not
// taken for a file named "-"; --follow is refused.
// (What it shows is show's, which TestMcpspy_ShowStdin checks: this test
// stops short of the terminal.)
func TestRunInspect_Stdin(t *testing.T) {
	har, err := os.ReadFile(shippedCassette(t, "everything-http.har"))
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := os.ReadFile(filepath.Join("..", "..", "store", "testdata", "playwright-chromium.zip"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		stdin []byte
		args  []string
		code  int
		want  string
	}{
		{"a HAR", har, []string{"inspect", "-"}, 1, "mcpspy: inspect needs a terminal: "},
		{"a zip", zipped, []string{"inspect", "-"}, 1, "mcpspy: stdin: a zip archive (a HAR in one) cannot be read from a pipe, which cannot seek: save it to a FILE.zip and read that\n"},
		{"--follow", har, []string{"inspect", "--follow", "-"}, 2, "mcpspy: inspect: --follow needs a .db cassette; stdin is read whole, as a JSONL export or a HAR\n"},
	} {
		var errb bytes.Buffer
		err := run(context.Background(), tt.args, streams{In: bytes.NewReader(tt.stdin), Out: &bytes.Buffer{}, Err: &errb})
		if code := cli.ExitCode("mcpspy", err, &errb); code != tt.code || !strings.HasPrefix(lastBlock(errb.String()), tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tt.name, code, errb.String(), tt.code, tt.want)
		}
	}
}
