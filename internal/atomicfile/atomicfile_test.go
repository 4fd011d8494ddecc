package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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
	// A good fill replaces it, and it keeps its mode.
	if err := Write(path, 0o600, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("file %q mode %v, want mode 0644 as it was", b, st.Mode().Perm())
	}
	// A new file gets the mode asked for.
	fresh := filepath.Join(dir, "fresh.jsonl")
	if err := Write(fresh, 0o600, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", st.Mode().Perm())
	}
	// A directory that does not exist is an error naming the path.
	if err := Write(filepath.Join(dir, "no", "x"), 0o600, func(*os.File) error { return nil }); err == nil {
		t.Error("no error for a missing directory")
	}
}

// Errors name the file asked for, never the temporary one, whether the
// reason came from fill (which may open the file by name), from writing
// it, or from renaming it into place.
func TestWrite_ErrorsNamePath(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	tests := []struct {
		name string
		path string
		fill func(f *os.File) error
		want string
		is   error
	}{
		{"fill names the file", "out.db", func(f *os.File) error {
			return fmt.Errorf("import into %s: %w", f.Name(), boom)
		}, "import into {path}: boom", boom},
		{"writing fails", "out.jsonl", func(f *os.File) error {
			f.Close()
			_, err := f.WriteString("x")
			return err
		}, "write {path}: file already closed", os.ErrClosed},
		{"path is a directory", "adir", func(*os.File) error { return nil }, "write {path}: cannot replace it (a directory, not a file)", nil},
		{"path is a named pipe", "apipe", func(*os.File) error { return nil }, "write {path}: cannot replace it (a named pipe, not a file)", nil},
		{"no such directory", filepath.Join("no", "x"), func(*os.File) error { return nil }, "write {path}: create a file in ", fs.ErrNotExist},
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "apipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.path)
			err := Write(path, 0o600, tt.fill)
			want := strings.ReplaceAll(tt.want, "{path}", path)
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), ".tmp-") {
				t.Errorf("err = %v; want it to start %q and name no temporary file", err, want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v; want it to wrap %v", err, tt.is)
			}
		})
	}
}

// A file made read-only is refused, and left as it was, though the
// directory would let a rename replace it; for root too, as these tests
// run, whom access(2) lets write anything.
func TestWrite_ReadOnlyTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "golden.db")
	if err := os.WriteFile(path, []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	filled := false
	err := Write(path, 0o600, func(*os.File) error { filled = true; return nil })
	if want := "write " + path + ": permission denied"; !errors.Is(err, fs.ErrPermission) || err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v; want it to start %q", err, want)
	}
	if filled {
		t.Error("fill ran for a file that is not to be written")
	}
	st, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "old" || st.Mode().Perm() != 0o444 {
		t.Errorf("after the refusal the file holds %q, mode %v", b, st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}
