package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/cli"
)

// runIn runs mcpspy with stdin as its standard input.
func runIn(stdin []byte, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, streams{In: bytes.NewReader(stdin), Out: &out, Err: &errb})
	return cli.ExitCode("mcpspy", err, &errb), out.String(), errb.String()
}

// readShipped reads a shipped cassette's bytes, to pipe to a command.
func readShipped(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shippedCassette(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stdinCase is a command run with stdin, the exit it should give and
// what its stderr should hold.
type stdinCase struct {
	name  string
	stdin []byte
	args  []string
	code  int
	want  string
}

// Every command that reads a CASSETTE reads "-" as the JSONL export on
// stdin and prints what it prints for the file, named stdin where it
// names the file. (A HAR on stdin: TestMcpspy_ReadersTakeHAROnStdin.)
func TestMcpspy_ReadersTakeStdin(t *testing.T) {
	path := shippedCassette(t, "everything-stdio.jsonl")
	http := shippedCassette(t, "everything-http.jsonl")
	jsonl := readShipped(t, "everything-stdio.jsonl")
	db := shippedCassette(t, "everything-stdio.db")
	readsAsFile(t, path, jsonl, []fileAndStdin{
		{"ls", []string{"ls", path}, []string{"ls", "-"}},
		{"ls --json", []string{"ls", "--json", path}, []string{"ls", "--json", "-"}},
		{"export", []string{"export", path}, []string{"export", "-"}},
		{"export --session --redact", []string{"export", "--session", "everything", "--redact", "message", path}, []string{"export", "--session", "everything", "--redact", "message", "-"}},
		{"export --filter", []string{"export", "--filter", "tool:echo", path}, []string{"export", "--filter", "tool:echo", "-"}},
		{"export --script", []string{"export", "--script", path}, []string{"export", "--script", "-"}},
		{"diff A", []string{"diff", "--all", path, http}, []string{"diff", "--all", "-", http}},
		{"diff B", []string{"diff", "--all", http, path}, []string{"diff", "--all", http, "-"}},
		{"lint", []string{"lint", path}, []string{"lint", "-"}},
	})
	// What a reading command cannot do with stdin it refuses with the reason.
	for _, tt := range []stdinCase{
		{"export no such session", jsonl, []string{"export", "--session", "s9", "-"}, 1, `stdin`},
		{"diff both", jsonl, []string{"diff", "-", "-"}, 2, "mcpspy: diff: - (stdin) given 2 times; stdin holds one recording, so name a file for the others"},
		{"lint twice", jsonl, []string{"lint", "-", db, "-"}, 2, "mcpspy: lint: - (stdin) given 2 times"},
		{"lint a broken line", []byte("{\"session\":\n"), []string{"lint", "-"}, 1, "mcpspy: stdin:1: bad JSONL cassette"},
		{"ls nothing", nil, []string{"ls", "-"}, 0, "mcpspy: ls: stdin holds no session"},
		// rerun reads its SOURCE before it starts the server: the
		// session it was asked for is looked for on stdin.
		{"rerun", jsonl, []string{"rerun", "--session", "s9", "-", "--", "true"}, 1, `session "s9"`},
		{"rerun twice", jsonl, []string{"rerun", "-", "-", "--", "true"}, 2, "mcpspy: rerun: - (stdin) given 2 times"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runIn(tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "-: cassette does not exist") {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// fileAndStdin is a command on a file and the same command on stdin.
type fileAndStdin struct {
	name  string
	file  []string
	stdin []string
}

// readsAsFile checks that each command run on stdin holding the bytes of
// the file at path prints what it prints for the file, named stdin where
// it names the file (by its path, or in a note by its name).
func readsAsFile(t *testing.T, path string, stdin []byte, cases []fileAndStdin) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			wantCode, stdout, stderr := runCaptured(tt.file...)
			want := strings.NewReplacer(path, "stdin", filepath.Base(path), "stdin").Replace(stdout + stderr)
			code, stdout, stderr := runIn(stdin, tt.stdin...)
			if got := stdout + stderr; code != wantCode || got != want || want == "" {
				t.Errorf("%v: exit %d, output:\n%s\nwant exit %d and:\n%s", tt.stdin, code, got, wantCode, want)
			}
		})
	}
}

// A HAR on stdin (curl … | mcpspy ls -) is read as the .har it came
// from, as a HAR in a named pipe (<(cat x.har)) is: every reading command
// prints what it prints for the file, named stdin where it names the file.
func TestMcpspy_ReadersTakeHAROnStdin(t *testing.T) {
	path := shippedCassette(t, "everything-http.har")
	other := shippedCassette(t, "everything-http.jsonl")
	readsAsFile(t, path, readShipped(t, "everything-http.har"), []fileAndStdin{
		{"ls", []string{"ls", path}, []string{"ls", "-"}},
		{"ls --json", []string{"ls", "--json", path}, []string{"ls", "--json", "-"}},
		{"export", []string{"export", path}, []string{"export", "-"}},
		{"export --har", []string{"export", "--har", path}, []string{"export", "--har", "-"}},
		{"export --filter", []string{"export", "--filter", "tool:echo", path}, []string{"export", "--filter", "tool:echo", "-"}},
		{"export --script", []string{"export", "--script", path}, []string{"export", "--script", "-"}},
		{"show", []string{"show", "--body", path}, []string{"show", "--body", "-"}},
		{"diff", []string{"diff", "--all", path, other}, []string{"diff", "--all", "-", other}},
		{"lint", []string{"lint", path}, []string{"lint", "-"}},
	})
}

// export --salvage - reads on past the damage in an export on stdin, as
// it does in the file (and in a named pipe): it prints what the salvage
// of the file prints, named stdin.
func TestMcpspy_SalvageStdin(t *testing.T) {
	lines := strings.SplitAfter(string(readShipped(t, "everything-stdio.jsonl")), "\n")
	lines[3] = "{\"session\":\"s1\",\"seq\":3,\"di\n" // cut short, as a download can be
	damaged := []byte(strings.Join(lines, ""))
	path := filepath.Join(t.TempDir(), "damaged.jsonl")
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	readsAsFile(t, path, damaged, []fileAndStdin{
		{"export --salvage", []string{"export", "--salvage", path}, []string{"export", "--salvage", "-"}},
	})
	if code, _, stderr := runIn(readShipped(t, "everything-http.har"), "export", "--salvage", "-"); code != 1 || stderr != "mcpspy: stdin: a HAR is read whole or not at all: export it without --salvage\n" {
		t.Errorf("a HAR: exit %d, stderr %q", code, stderr)
	}
}

// A cassette on stdin redirected from its file (mcpspy ls - < x.db) is
// read from that file, which can seek as a pipe cannot: every reading
// command prints what it prints for the file, named stdin. A cassette
// piped in is still refused, for the reason that holds for a pipe.
func TestMcpspy_ReadersTakeCassetteFileOnStdin(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	other := shippedCassette(t, "everything-http.jsonl")
	for _, tt := range []fileAndStdin{
		{"ls", []string{"ls", db}, []string{"ls", "-"}},
		{"ls --json", []string{"ls", "--json", db}, []string{"ls", "--json", "-"}},
		{"export", []string{"export", db}, []string{"export", "-"}},
		{"export --filter", []string{"export", "--filter", "tool:echo", db}, []string{"export", "--filter", "tool:echo", "-"}},
		{"export --salvage", []string{"export", "--salvage", db}, []string{"export", "--salvage", "-"}},
		{"export --script", []string{"export", "--script", db}, []string{"export", "--script", "-"}},
		{"show", []string{"show", "--body", db}, []string{"show", "--body", "-"}},
		{"diff", []string{"diff", "--all", db, other}, []string{"diff", "--all", "-", other}},
		{"lint", []string{"lint", db}, []string{"lint", "-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantCode, stdout, stderr := runCaptured(tt.file...)
			want := strings.NewReplacer(db, "stdin", filepath.Base(db), "stdin").Replace(stdout + stderr)
			f, err := os.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out, errb bytes.Buffer
			err = run(context.Background(), tt.stdin, streams{In: f, Out: &out, Err: &errb})
			code := cli.ExitCode("mcpspy", err, &errb)
			if got := out.String() + errb.String(); code != wantCode || got != want || want == "" {
				t.Errorf("%v < %s: exit %d, output:\n%s\nwant exit %d and:\n%s", tt.stdin, db, code, got, wantCode, want)
			}
		})
	}
	f, err := os.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errb bytes.Buffer
	err = run(context.Background(), []string{"import", "-o", filepath.Join(t.TempDir(), "x.db"), "-"}, streams{In: f, Out: io.Discard, Err: &errb})
	if code := cli.ExitCode("mcpspy", err, &errb); code != 1 || errb.String() != "mcpspy: import: stdin is a cassette already; import reads a JSONL export or a HAR (mcpspy export makes one)\n" {
		t.Errorf("import - < x.db: exit %d, stderr %q", code, errb.String())
	}
	if code, _, stderr := runIn(readShipped(t, "everything-stdio.db"), "ls", "-"); code != 1 || !strings.Contains(stderr, "a bbolt cassette cannot be read from a pipe") {
		t.Errorf("a cassette piped in: exit %d, stderr %q", code, stderr)
	}
}
