package store

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// copyAs copies a shipped recording to dir under name.
func copyAs(t *testing.T, shipped, dir, name string) string {
	t.Helper()
	return peertest.ShippedAs(t, shipped, dir, name)
}

// A recording saved without a telling name is read by what it holds, as
// it would be under its own: a cassette, an export (also after a byte
// order mark and blank lines), a HAR, a HAR in a zip.
func TestLoad_WithoutATellingName(t *testing.T) {
	dir := t.TempDir()
	jsonl, err := os.ReadFile(filepath.Join("..", "cassettes", "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.txt")
	if err := os.WriteFile(bom, append([]byte("\ufeff \n\r\n"), jsonl...), 0o644); err != nil {
		t.Fatal(err)
	}
	zipped := filepath.Join(dir, "zipped")
	{
		f, err := os.Create(zipped)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		w, err := zw.Create("har.har")
		if err != nil {
			t.Fatal(err)
		}
		har, err := os.ReadFile(filepath.Join("..", "cassettes", "everything-http.har"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(har); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		path string
		same string // the shipped recording it must read as
		kind Kind
	}{
		{"a cassette", copyAs(t, "everything-stdio.db", dir, "cassette"), "everything-stdio.db", KindDB},
		{"a cassette .bolt", copyAs(t, "everything-stdio.db", dir, "x.bolt"), "everything-stdio.db", KindDB},
		{"an export", copyAs(t, "everything-stdio.jsonl", dir, "export"), "everything-stdio.jsonl", KindJSONL},
		{"an export after a BOM", bom, "everything-stdio.jsonl", KindJSONL},
		{"a HAR", copyAs(t, "everything-http.har", dir, "har.json.txt"), "everything-http.har", KindHAR},
		{"a zipped HAR", zipped, "everything-http.har", KindHAR},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := KindOf(tt.path); got != tt.kind {
				t.Errorf("KindOf = %d, want %d", got, tt.kind)
			}
			got, err := Load(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Load(filepath.Join("..", "cassettes", tt.same))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Sessions) != len(want.Sessions) || len(got.Sessions) == 0 {
				t.Fatalf("%d sessions, want %d", len(got.Sessions), len(want.Sessions))
			}
			for i := range want.Sessions {
				if g, w := len(got.Sessions[i].Messages), len(want.Sessions[i].Messages); g != w {
					t.Errorf("session %d: %d messages, want %d", i, g, w)
				}
			}
		})
	}
}

// A telling name decides, whatever the file holds: a .db holding JSONL
// keeps the bbolt open's clear error, as before.
func TestKindOf_NameDecides(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		path string
		kind Kind
	}{
		{copyAs(t, "everything-stdio.jsonl", dir, "x.db"), KindDB},
		{copyAs(t, "everything-stdio.db", dir, "x.jsonl"), KindJSONL},
		{copyAs(t, "everything-stdio.jsonl", dir, "x.har"), KindHAR},
		{copyAs(t, "everything-stdio.jsonl", dir, "x.json"), KindDB},
		{filepath.Join(dir, "missing"), KindDB},
		{dir, KindDB},
	} {
		if got := KindOf(tt.path); got != tt.kind {
			t.Errorf("KindOf(%s) = %d, want %d", filepath.Base(tt.path), got, tt.kind)
		}
	}
}

// A recording under another kind's name (an export saved as x.db, a
// cassette as x.jsonl) is named for what its first bytes show, not
// refused with the reader's own words ("not a bbolt database", "invalid
// character '\x00'"), and salvage does not take a cassette for an export
// whose every line is damaged.
func TestLoad_MisnamedRecording(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, shipped, as string
		is                error
		want              string
	}{
		{"an export named .db", "everything-stdio.jsonl", "export.db", ErrNotCassette,
			"not an mcptape cassette: it looks like a JSONL export (it starts with {), not a bbolt cassette as its name says; name it .jsonl to read it as one"},
		{"a HAR named .db", "everything-http.har", "har.db", ErrNotCassette,
			`not an mcptape cassette: it looks like a HAR (it starts with {"log"), not a bbolt cassette as its name says; name it .har to read it as one`},
		{"a cassette named .jsonl", "everything-stdio.db", "cassette.jsonl", ErrNotJSONL,
			"not a JSONL export: it looks like a bbolt cassette (it starts with a bbolt meta page), not a JSONL export as its name says; name it .db to read it as one"},
		{"a HAR named .jsonl", "everything-http.har", "har.jsonl", ErrNotJSONL,
			`not a JSONL export: it looks like a HAR (it starts with {"log"), not a JSONL export as its name says; name it .har to read it as one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := copyAs(t, tt.shipped, dir, tt.as)
			want := path + ": " + tt.want
			_, err := Load(path)
			if !errors.Is(err, tt.is) || err.Error() != want {
				t.Errorf("Load: %v\nwant %s (%v)", err, want, tt.is)
			}
			_, err = Salvage(path, io.Discard, nil)
			if !errors.Is(err, tt.is) || err.Error() != want {
				t.Errorf("Salvage: %v\nwant %s (%v)", err, want, tt.is)
			}
		})
	}
}
