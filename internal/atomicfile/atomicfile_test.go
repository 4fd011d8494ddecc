//go:build !windows

package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
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
		{"path is a socket", "asocket", func(*os.File) error { return nil }, "write {path}: cannot replace it (a socket, not a file)", nil},
		{"fill fails on a named pipe", "apipe", func(f *os.File) error {
			return fmt.Errorf("export into %s: %w", f.Name(), boom)
		}, "export into {path}: boom", boom},
		{"path is a link to itself", "aloop", func(*os.File) error { return nil }, "write {path}: too many levels of symbolic links", unix.ELOOP},
		{"no such directory", filepath.Join("no", "x"), func(*os.File) error { return nil }, "write {path}: create a file in ", fs.ErrNotExist},
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	fifoWithReader(t, filepath.Join(dir, "apipe"))
	sock, err := net.Listen("unix", filepath.Join(dir, "asocket"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.Close() })
	symlink(t, "aloop", filepath.Join(dir, "aloop"))
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

// A character device or a named pipe is written directly, not replaced:
// -o /dev/null checks that a file reads, and a FIFO's reader gets the
// text. Neither is replaced, and no temporary file is left beside it.
func TestWrite_Direct(t *testing.T) {
	if err := Write(os.DevNull, 0o600, func(f *os.File) error {
		_, err := f.WriteString("discarded\n")
		return err
	}); err != nil {
		t.Errorf("write %s: %v", os.DevNull, err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s after the write: %v %v, want the device still", os.DevNull, st.Mode(), err)
	}

	dir := t.TempDir()
	fifo := filepath.Join(dir, "export.jsonl")
	// What is written fits in the pipe's buffer, so the write does not
	// wait for the reader to read.
	reader := fifoWithReader(t, fifo)
	if !Direct(fifo) || Direct(filepath.Join(dir, "missing")) || Direct(dir) {
		t.Errorf("Direct: a pipe %v, a missing file %v, a directory %v; want true, false, false",
			Direct(fifo), Direct(filepath.Join(dir, "missing")), Direct(dir))
	}
	if err := Write(fifo, 0o600, func(f *os.File) error {
		_, err := f.WriteString("{\"session\":\"s1\"}\n")
		return err
	}); err != nil {
		t.Fatalf("write %s: %v", fifo, err)
	}
	got, err := io.ReadAll(reader)
	if err != nil || string(got) != "{\"session\":\"s1\"}\n" {
		t.Errorf("the pipe's reader got %q (%v)", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if st, err := os.Stat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 || len(entries) != 1 {
		t.Errorf("after the write: %v %v, %d entries; want the pipe alone, still a pipe", st.Mode(), err, len(entries))
	}
}

// fifoWithReader makes a named pipe at path and opens it to read, so that
// an open of it for writing does not wait for a reader.
func fifoWithReader(t *testing.T, path string) *os.File {
	t.Helper()
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	return reader
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

// A symbolic link is written through: the file it leads to gets the new
// content and keeps its mode, the link stays a link, and the temporary
// file was beside the real file, where a rename can reach it.
func TestWrite_ThroughSymlink(t *testing.T) {
	tests := []struct {
		name string
		// setup makes the link (path) and the file it leads to (real),
		// under dir, with "old" in real unless real is to be new.
		setup    func(t *testing.T, dir string) (path, real string)
		wantMode fs.FileMode
	}{
		{"relative link to another directory", func(t *testing.T, dir string) (string, string) {
			real := mkfile(t, filepath.Join(dir, "dotfiles", "mcp.json"), 0o644)
			return symlink(t, filepath.Join("dotfiles", "mcp.json"), filepath.Join(dir, "host.json")), real
		}, 0o644},
		{"absolute link", func(t *testing.T, dir string) (string, string) {
			real := mkfile(t, filepath.Join(dir, "real", "c.json"), 0o640)
			return symlink(t, real, filepath.Join(dir, "c.json")), real
		}, 0o640},
		{"link to a link", func(t *testing.T, dir string) (string, string) {
			real := mkfile(t, filepath.Join(dir, "a", "c.json"), 0o644)
			mid := symlink(t, filepath.Join("a", "c.json"), filepath.Join(dir, "mid.json"))
			return symlink(t, mid, filepath.Join(dir, "c.json")), real
		}, 0o644},
		{"../ in a link inside a linked directory", func(t *testing.T, dir string) (string, string) {
			// alias/link is x/real/link, whose ../c.json is x/c.json, not
			// the c.json beside alias that Join would make of it.
			real := mkfile(t, filepath.Join(dir, "x", "c.json"), 0o644)
			mkfile(t, filepath.Join(dir, "c.json"), 0o644)
			if err := os.MkdirAll(filepath.Join(dir, "x", "real"), 0o700); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join("x", "real"), filepath.Join(dir, "alias"))
			symlink(t, filepath.Join("..", "c.json"), filepath.Join(dir, "x", "real", "link"))
			return filepath.Join(dir, "alias", "link"), real
		}, 0o644},
		{"link to a file yet to be written", func(t *testing.T, dir string) (string, string) {
			if err := os.Mkdir(filepath.Join(dir, "dotfiles"), 0o700); err != nil {
				t.Fatal(err)
			}
			real := filepath.Join(dir, "dotfiles", "mcp.json")
			return symlink(t, filepath.Join("dotfiles", "mcp.json"), filepath.Join(dir, "host.json")), real
		}, 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, real := tt.setup(t, dir)
			var tmpDir string
			err := Write(path, 0o600, func(f *os.File) error {
				tmpDir = filepath.Dir(f.Name())
				_, err := f.WriteString("new")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s is no longer a link: %v %v", path, st.Mode(), err)
			}
			st, err := os.Stat(real)
			if err != nil {
				t.Fatalf("the file the link leads to: %v", err)
			}
			if b, _ := os.ReadFile(real); string(b) != "new" || st.Mode().Perm() != tt.wantMode {
				t.Errorf("the file the link leads to holds %q, mode %v; want \"new\", mode %v", b, st.Mode().Perm(), tt.wantMode)
			}
			if want := filepath.Dir(real); tmpDir != want {
				t.Errorf("temporary file in %s, want it beside the real file, in %s", tmpDir, want)
			}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.Contains(d.Name(), ".tmp-") {
					t.Errorf("left behind: %s", p)
				}
				return nil
			})
		})
	}
}

// mkfile writes "old" to path with mode, making its directory.
func mkfile(t *testing.T, path string, mode fs.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("old"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// symlink makes a link at path to target and returns path.
func symlink(t *testing.T, target, path string) string {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	return path
}
