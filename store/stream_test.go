package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// ReadStream reads what stdin or a pipe holds as the file it came from
// reads: an export and a HAR give the tape Load gives, with the same
// JSONL; a zip archive and a bbolt cassette, which need to seek, are
// refused with the reason and what to do instead.
func TestReadStream(t *testing.T) {
	for _, tt := range []struct {
		name    string
		file    string
		wantErr string
	}{
		{"a JSONL export", filepath.Join("..", "cassettes", "everything-stdio.jsonl"), ""},
		{"a HAR", filepath.Join("..", "cassettes", "everything-http.har"), ""},
		{"a zip", filepath.Join("testdata", "playwright-chromium.zip"), "stdin: a zip archive (a HAR in one) cannot be read from a pipe, which cannot seek: save it to a FILE.zip and read that"},
		{"a bbolt cassette", filepath.Join("..", "cassettes", "everything-stdio.db"), "stdin: not an mcptape cassette: a bbolt cassette cannot be read from a pipe, which cannot seek: name the .db itself"},
		{"notes", filepath.Join("testdata", "harmaker", "README.md"), "stdin: not an mcptape cassette (not a JSONL export or a HAR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := store.ReadStream(bytes.NewReader(b), "stdin")
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "not an mcptape cassette") && !errors.Is(err, store.ErrNotCassette) {
					t.Errorf("err %v does not wrap ErrNotCassette", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := store.Load(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var gotText, wantText bytes.Buffer
			if err := store.WriteJSONL(&gotText, got); err != nil {
				t.Fatal(err)
			}
			if err := store.WriteJSONL(&wantText, want); err != nil {
				t.Fatal(err)
			}
			if gotText.String() != wantText.String() || len(want.Sessions) == 0 {
				t.Errorf("read from a stream:\n%s\nwant what Load of the file reads:\n%s", gotText.String(), wantText.String())
			}
		})
	}
}

// A HAR that keeps its bodies in files beside it (Playwright's content
// "attach") cannot have them read from a pipe, which has no directory
// beside it: the error names the entry and the file, and says why.
func TestReadStream_HARWithFilesBeside(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "playwright-attach", "playwright-chromium.har"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.ReadStream(bytes.NewReader(b), "stdin")
	want := `stdin: entry 1: response body: it is in _file "b6a931c86c32a2ff476c5f8cf446cee30f96f8bb.html", and a HAR read from a pipe has no directory beside it to read that from: save the HAR where its files are and name the .har (Playwright's recordHar with content "attach" keeps bodies in files beside the HAR)`
	if err == nil || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
}

// SalvageStream reads on past damage in an export on stdin as Salvage
// does in the file, and refuses what ReadStream refuses, and a HAR, with
// the words a file gets.
func TestSalvageStream(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "cassettes", "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	damaged := append(b, "{\"session\":\"s1\",\"seq\":20,\"di\n"...)
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	wantRep, err := store.Salvage(path, &want, nil)
	if err != nil {
		t.Fatal(err)
	}
	gotRep, err := store.SalvageStream(bytes.NewReader(damaged), path, &got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || len(gotRep.Lost) != 1 || gotRep.Lost[0].Err.Error() != wantRep.Lost[0].Err.Error() {
		t.Errorf("salvaged from a stream: %+v\n%s\nwant what the file gives: %+v\n%s", gotRep, got.String(), wantRep, want.String())
	}
	for _, tt := range []struct{ file, want string }{
		{filepath.Join("..", "cassettes", "everything-http.har"), "stdin: a HAR is read whole or not at all: export it without --salvage"},
		{filepath.Join("testdata", "playwright-chromium.zip"), "stdin: a zip archive (a HAR in one) cannot be read from a pipe, which cannot seek: save it to a FILE.zip and read that"},
		{filepath.Join("..", "cassettes", "everything-stdio.db"), "stdin: not an mcptape cassette: a bbolt cassette cannot be read from a pipe, which cannot seek: name the .db itself"},
	} {
		b, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.SalvageStream(bytes.NewReader(b), "stdin", new(bytes.Buffer), nil); err == nil || err.Error() != tt.want {
			t.Errorf("%s: err %v, want %q", tt.file, err, tt.want)
		}
	}
}
