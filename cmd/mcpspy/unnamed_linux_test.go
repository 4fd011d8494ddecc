package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// runOnPipe runs mcpspy with the path of a pipe holding b (as a shell's
// <(…) names it, /dev/fd/63) in place of "PIPE" among args.
func runOnPipe(t *testing.T, b []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path, done := peertest.PipePath(t, b)
	for i, a := range args {
		if a == "PIPE" {
			args[i] = path
		}
	}
	code, stdout, stderr = runCaptured(args...)
	done()
	return code, strings.ReplaceAll(stdout, path, "PIPE"), strings.ReplaceAll(stderr, path, "PIPE")
}

// mcpspy show <(mcpspy export x.db): the shell names the pipe /dev/fd/63,
// which says nothing of what it holds; show reads the export in it, and
// import takes it as it takes stdin, a HAR too.
func TestMcpspy_ProcessSubstitution(t *testing.T) {
	jsonl := readShipped(t, "everything-stdio.jsonl")
	_, want, _ := runCaptured("show", shippedCassette(t, "everything-stdio.jsonl"))
	if code, got, stderr := runOnPipe(t, jsonl, "show", "PIPE"); code != 0 || got != want || want == "" {
		t.Errorf("show: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, got, want)
	}
	out := filepath.Join(t.TempDir(), "x.db")
	if code, _, stderr := runOnPipe(t, jsonl, "import", "-o", out, "PIPE"); code != 0 || !strings.Contains(stderr, "from PIPE") {
		t.Fatalf("import: exit %d, stderr %q", code, stderr)
	}
	if _, got, _ := runCaptured("show", out); got != want {
		t.Errorf("show of the import:\n%s\nwant:\n%s", got, want)
	}
	if code, _, stderr := runOnPipe(t, readShipped(t, "everything-http.har"), "import", "-o", out, "PIPE"); code != 0 || !strings.HasPrefix(stderr, "mcpspy: import: 12 messages in 1 session from PIPE\n") {
		t.Errorf("import of a HAR: exit %d, stderr %q", code, stderr)
	}
}

// "-" and a named pipe are read by one reader (store.ReadStream), so they
// take and refuse the same things in the same words, whatever the
// command: an export and a HAR are read; a zip archive and a bbolt
// cassette, which need to seek, are refused with what to do instead; a
// HAR whose bodies are in files beside it is refused naming the entry; a
// damaged export is refused, or salvaged, alike.
func TestMcpspy_StdinReadsAsAPipe(t *testing.T) {
	inputs := map[string][]byte{
		"an export":        readShipped(t, "everything-stdio.jsonl"),
		"a HAR":            readShipped(t, "everything-http.har"),
		"a cassette":       readShipped(t, "everything-stdio.db"),
		"a zip":            readTestdata(t, "playwright-chromium.zip"),
		"attached bodies":  readTestdata(t, filepath.Join("playwright-attach", "playwright-chromium.har")),
		"a damaged export": append(readShipped(t, "everything-stdio.jsonl"), "{\"session\":\"s1\",\"seq\":20,\"di\n"...),
	}
	for name, b := range inputs {
		for _, cmd := range [][]string{{"ls"}, {"export"}, {"export", "--salvage"}, {"show"}, {"lint"}, {"import", "-o", "OUT"}} {
			t.Run(name+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				// import writes a new cassette each time, named OUT in
				// what it says.
				pipeOut, stdinOut := filepath.Join(t.TempDir(), "x.db"), filepath.Join(t.TempDir(), "x.db")
				with := func(out, file string) []string {
					return append(strings.Fields(strings.ReplaceAll(strings.Join(cmd, " "), "OUT", out)), file)
				}
				wantCode, wantOut, wantErr := runOnPipe(t, b, with(pipeOut, "PIPE")...)
				code, stdout, stderr := runIn(b, with(stdinOut, "-")...)
				want := strings.ReplaceAll(wantOut+wantErr, pipeOut, "OUT")
				got := strings.NewReplacer("stdin", "PIPE", stdinOut, "OUT").Replace(stdout + stderr)
				if code != wantCode || got != want || want == "" {
					t.Errorf("on stdin: exit %d, output:\n%s\nwant what the pipe gives, exit %d and:\n%s", code, got, wantCode, want)
				}
			})
		}
	}
}

// readTestdata reads a file of the store's test data, to pipe to a
// command.
func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "store", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
