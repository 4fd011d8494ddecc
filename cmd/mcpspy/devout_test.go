package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/store"
	"golang.org/x/sys/unix"
)

// -o /dev/null is how a user checks that a file reads (or imports)
// without keeping the result: every -o writes to a device directly, as
// it does to a named pipe, instead of refusing to replace it.
func TestMcpspy_OutToDevice(t *testing.T) {
	db, jsonl, har := shippedCassette(t, "everything-stdio.db"), shippedCassette(t, "everything-stdio.jsonl"), shippedCassette(t, "everything-http.har")
	http := shippedCassette(t, "everything-http.db")
	for _, args := range [][]string{
		{"export", "-o", os.DevNull, db},
		{"export", "--salvage", "-o", os.DevNull, db},
		{"export", "--har", "-o", os.DevNull, http},
		{"export", "--script", "-o", os.DevNull, db},
		{"export", "--filter", "tool:echo", "-o", os.DevNull, db},
		{"import", "-o", os.DevNull, jsonl},
		{"import", "-o", os.DevNull, har},
	} {
		if code, _, errOut := runCaptured(args...); code != 0 {
			t.Errorf("mcpspy %q: exit %d\n%s", args, code, errOut)
		}
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, st.Mode(), err)
	}

	// A named pipe's reader gets what stdout would, and a cassette whole.
	want := new(bytes.Buffer)
	if err := run(t.Context(), []string{"export", db}, streams{In: new(bytes.Buffer), Out: want, Err: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if got := readFIFO(t, "export", "-o", "{fifo}", db); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("export -o FIFO gave %d bytes, stdout %d", len(got), want.Len())
	}
	built := filepath.Join(t.TempDir(), "piped.db")
	if err := os.WriteFile(built, readFIFO(t, "import", "-o", "{fifo}", jsonl), 0o600); err != nil {
		t.Fatal(err)
	}
	tape, err := store.Load(built)
	if err != nil || len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) != 19 {
		t.Errorf("import -o FIFO: the cassette read back: %v", err)
	}
}

// readFIFO runs mcpspy with args, "{fifo}" replaced by a named pipe, and
// returns what it wrote there.
func readFIFO(t *testing.T, args ...string) []byte {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "out")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "{fifo}" {
			args[i] = fifo
		}
	}
	// A writer of the test's own holds the pipe open, so that its reader
	// sees no end before mcpspy has opened it; closed once mcpspy is done.
	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hold, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	code, _, errOut := runCaptured(args...)
	hold.Close()
	b := <-got
	if code != 0 {
		t.Fatalf("mcpspy %q: exit %d\n%s", args, code, errOut)
	}
	return b
}
