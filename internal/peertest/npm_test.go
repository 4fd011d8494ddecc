package peertest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An installed tree is up to date with the lockfile by content: a
// worktree's fresh checkout of the same lockfile (newer than the tree)
// must not install again, a changed lockfile must.
func TestUpToDate(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "package-lock.json")
	write := func(path, text string, at time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	write(lock, `{"lockfileVersion":3}`, now.Add(-2*time.Hour))
	if upToDate(dir) {
		t.Fatal("nothing installed, yet up to date")
	}
	write(filepath.Join(dir, "node_modules", ".package-lock.json"), `{}`, now.Add(-time.Hour))
	if !upToDate(dir) {
		t.Fatal("installed after the lockfile was written, yet not up to date")
	}
	write(lock, `{"lockfileVersion":3}`, now) // checked out again: newer, the same
	if !upToDate(dir) {
		t.Error("the same lockfile checked out anew asks for an install")
	}
	write(lock, `{"lockfileVersion":3,"packages":{}}`, now)
	if upToDate(dir) {
		t.Error("a changed lockfile is taken as installed")
	}
}
