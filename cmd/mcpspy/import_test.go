package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
