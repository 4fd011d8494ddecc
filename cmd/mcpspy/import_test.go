package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/store"
)

// import into a cassette made read-only is refused with the file named,
// and the cassette is left as it was, mode and all: import writes a copy
// and renames it over the original, which the directory alone allows.
func TestMcpspy_ImportIntoReadOnly(t *testing.T) {
	golden := filepath.Join(t.TempDir(), "golden.db")
	if err := store.Init(golden); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(golden, 0o444); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCaptured("import", "-o", golden, shippedCassette(t, "everything-stdio.jsonl"))
	if want := "mcpspy: write " + golden + ": permission denied"; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 and stderr starting %q", code, stderr, want)
	}
	st, _ := os.Stat(golden)
	if after, _ := os.ReadFile(golden); string(after) != string(before) || st.Mode().Perm() != 0o444 {
		t.Errorf("the read-only cassette was written: %d bytes, was %d; mode %v", len(after), len(before), st.Mode().Perm())
	}
}

// import into an empty file (as mktemp --suffix .db makes) takes it for a
// new cassette, as record -o does.
func TestMcpspy_ImportIntoEmptyFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	export := shippedCassette(t, "everything-stdio.jsonl")
	if code, _, stderr := runCaptured("import", "-o", empty, export); code != 0 {
		t.Fatalf("import into an empty file: exit %d, stderr %q", code, stderr)
	}
	_, again, _ := runCaptured("export", empty)
	if want, _ := os.ReadFile(export); again != string(want) {
		t.Errorf("the cassette made of the empty file does not export as %s", export)
	}
}

// import into a cassette that holds the export's session ids already (as
// any recording does: each starts at s1) gives each taken one the next
// free id and says so on stderr.
func TestMcpspy_ImportTakenIDs(t *testing.T) {
	multi := filepath.Join(t.TempDir(), "multi.db")
	export := brokenExport(t)
	runOK(t, "import", "-o", multi, export)
	runOK(t, "import", "-o", multi, export) // s2
	code, _, stderr := runCaptured("import", "-o", multi, export)
	if want := "mcpspy: import: session s1 of " + export + " is s3 in " + multi + " (s1 was taken)\n"; code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	var ids []string
	for _, s := range readTape(t, multi).Sessions {
		ids = append(ids, s.Info.ID)
	}
	if want := []string{"s1", "s2", "s3"}; !slices.Equal(ids, want) {
		t.Errorf("%s holds sessions %q, want %q", multi, ids, want)
	}
}

// import says on one line of stderr what it took, from a JSONL export as
// from a HAR, each count spelled for its number.
func TestMcpspy_ImportSummary(t *testing.T) {
	dir := t.TempDir()
	har := filepath.Join(dir, "http.har")
	runOK(t, "export", "--har", "-o", har, shippedCassette(t, "everything-http.db"))
	tests := []struct {
		name string
		from string
		want string
	}{
		{"a JSONL export", shippedCassette(t, "everything-stdio.jsonl"), "19 messages in 1 session"},
		{"a HAR", har, "12 messages in 1 session"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("c%d.db", i))
			code, _, stderr := runCaptured("import", "-o", out, tt.from)
			if want := "mcpspy: import: " + tt.want + " from " + tt.from + "\n"; code != 0 || stderr != want {
				t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
			}
		})
	}
}

// import's FILE "-" is stdin, as for tar and curl, so that an export
// pipes into a cassette; a HAR on stdin is imported as the .har file is,
// its credentials redacted unless --no-redact.
func TestMcpspy_ImportStdin(t *testing.T) {
	jsonl, err := os.ReadFile(shippedCassette(t, "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	har, err := os.ReadFile(shippedCassette(t, "everything-http.har"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "piped.db")
	importFrom := func(stdin []byte, flags ...string) (int, string) {
		var errb bytes.Buffer
		err := run(context.Background(), append(append([]string{"import", "-o", out}, flags...), "-"), streams{In: bytes.NewReader(stdin), Out: io.Discard, Err: &errb})
		return cli.ExitCode("mcpspy", err, &errb), errb.String()
	}
	if code, stderr := importFrom(jsonl); code != 0 || stderr != "mcpspy: import: 19 messages in 1 session from stdin\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, exported, _ := runCaptured("export", out); exported != string(jsonl) {
		t.Error("the cassette imported from stdin exports other text than went in")
	}
	for _, flags := range [][]string{nil, {"--no-redact"}, {"--redact", "Mcp-Session-Id"}} {
		harPath := shippedCassette(t, "everything-http.har")
		fromFile, fromStdin := filepath.Join(t.TempDir(), "file.db"), filepath.Join(t.TempDir(), "stdin.db")
		wantCode, _, want := runCaptured(append(append([]string{"import", "-o", fromFile}, flags...), harPath)...)
		want = strings.NewReplacer(harPath, "stdin", fromFile, fromStdin).Replace(want)
		code, _, stderr := runIn(har, append(append([]string{"import", "-o", fromStdin}, flags...), "-")...)
		if code != wantCode || stderr != want || wantCode != 0 {
			t.Errorf("a HAR on stdin, %v: exit %d, stderr %q; want exit %d and %q", flags, code, stderr, wantCode, want)
		}
		_, wantText, _ := runCaptured("export", fromFile)
		if _, got, _ := runCaptured("export", fromStdin); got != wantText || !strings.Contains(got, `"session":"s1"`) {
			t.Errorf("a HAR on stdin, %v: the cassette exports\n%s\nwant what the .har's import exports:\n%s", flags, got, wantText)
		}
	}
	if code, stderr := importFrom(jsonl, "--redact", "token"); code != 2 || !strings.Contains(stderr, "import: --redact, --redact-value and --no-redact are for a HAR;") {
		t.Errorf("--redact with an export on stdin: exit %d, stderr %q", code, stderr)
	}
	if code, stderr := importFrom([]byte("{\"session\":\n")); code != 1 || !strings.HasPrefix(stderr, "mcpspy: stdin:1: bad JSONL cassette") {
		t.Errorf("a broken export on stdin: exit %d, stderr %q", code, stderr)
	}
}
