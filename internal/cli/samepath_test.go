package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSamePath(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		name string
		x, y string
		want bool
	}{
		{"one path", a, a, true},
		{"relative and absolute", "a.db", a, true},
		{"unclean", "./sub/../a.db", a, true},
		{"a symlink to it", link, a, true},
		{"two files", a, b, false},
		{"one missing", filepath.Join(dir, "missing.db"), a, false},
		{"both missing, one name", "missing.db", filepath.Join(dir, "missing.db"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SamePath(tt.x, tt.y); got != tt.want {
				t.Errorf("SamePath(%q, %q) = %v, want %v", tt.x, tt.y, got, tt.want)
			}
		})
	}
}
