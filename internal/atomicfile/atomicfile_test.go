package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A failing fill leaves the old file and no temporary behind.
	boom := errors.New("boom")
	if err := Write(path, 0o600, func(f *os.File) error { f.WriteString("half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	// A good fill replaces it, with the mode asked for.
	if err := Write(path, 0o600, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("file %q mode %v", b, st.Mode().Perm())
	}
	// A directory that does not exist is an error naming the path.
	if err := Write(filepath.Join(dir, "no", "x"), 0o600, func(*os.File) error { return nil }); err == nil {
		t.Error("no error for a missing directory")
	}
}
