package store_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/store"
)

// Playwright's recordHar to a .zip path keeps the HAR (har.har) and each
// body's file in a zip archive. It is read where it lies, and gives what
// the same archive unpacked into a directory gives: the session the page
// spoke, every body read from its file.
func TestReadHARFile_PlaywrightZip(t *testing.T) {
	archive := filepath.Join("testdata", "playwright-chromium.zip")
	zipped, err := store.ReadHARFile(archive, store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if zipped.Skipped != 1 || zipped.EmptyStreams != 0 || len(zipped.Sessions) != 1 {
		t.Fatalf("skipped %d, %d empty streams, %d sessions; want the page skipped and one session", zipped.Skipped, zipped.EmptyStreams, len(zipped.Sessions))
	}
	if d := cmp.Diff(playwrightSession, withoutEventIDs(listing(zipped.Sessions[0]))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	dir := t.TempDir()
	unzip(t, archive, dir)
	unpacked, err := store.ReadHARFile(filepath.Join(dir, "har.har"), store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z, u := zipped.Sessions[0], unpacked.Sessions[0]
	if len(z.Messages) != len(u.Messages) {
		t.Fatalf("%d messages from the archive, %d unpacked", len(z.Messages), len(u.Messages))
	}
	for i, m := range z.Messages {
		if !bytes.Equal(m.Frame, u.Messages[i].Frame) || !m.Time.Equal(u.Messages[i].Time) {
			t.Errorf("seq %d: %.80s at %v from the archive, %.80s at %v unpacked", m.Seq, m.Frame, m.Time, u.Messages[i].Frame, u.Messages[i].Time)
		}
	}
	tape, err := store.Load(archive)
	if err != nil || len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) != len(z.Messages) {
		t.Errorf("Load of the archive: %v", err)
	}
}

// unzip unpacks the archive at path into dir.
func unzip(t *testing.T, path, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Name)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// An archive that is not one, or holds no HAR to read, or a HAR whose
// body file it lacks, is an error that names the archive and what is
// wrong with it.
func TestReadHARFile_ZipErrors(t *testing.T) {
	const body = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	har := func(file string) string {
		return `{"log":{"entries":[{"startedDateTime":"2026-11-28T10:00:00Z","request":{"method":"POST","url":"http://h/mcp","postData":{"text":"","_file":"` + file + `"}},"response":{"status":202,"content":{"size":-1,"mimeType":"x-unknown"}}}]}}`
	}
	archive := func(files ...string) []byte { // name, content, name, content…
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for i := 0; i < len(files); i += 2 {
			w, err := zw.Create(files[i])
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, files[i+1])
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		file []byte
		want string // after the archive's path and ": "
	}{
		{"not a zip archive", []byte(har("body.json")), "not a zip archive (a .zip is read as the archive Playwright's recordHar writes, a HAR in it)"},
		{"a damaged archive", append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0}, 40)...), "not a readable zip archive: zip: not a valid zip file"},
		{"no HAR in it", archive("notes.txt", "x"), "no .har in the zip archive (Playwright's recordHar keeps its HAR there as har.har)"},
		{"two HARs, neither har.har", archive("b.har", har("body.json"), "a.har", har("body.json")), "2 HARs in the zip archive (a.har, b.har): unzip it and import one"},
		{"a body it lacks", archive("har.har", har("gone.json")), `har.har: entry 1: request body: _file: open gone.json: file does not exist`},
		{"a body outside the HAR's directory", archive("in/x.har", har("../body.json"), "body.json", body), `in/x.har: entry 1: request body: _file "../body.json" names no file beside the HAR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.zip")
			if err := os.WriteFile(path, tc.file, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := store.ReadHARFile(path, store.HARImportOptions{})
			if want := path + ": " + tc.want; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %v\nwant %q", err, want)
			}
		})
	}

	// The HAR is har.har, as recordHar names it, beside others; in a
	// directory of the archive, its bodies are read from there.
	for _, tc := range []struct {
		name  string
		files []string
	}{
		{"har.har beside another HAR", []string{"other.har", har("nothing.json"), "har.har", har("body.json"), "body.json", body}},
		{"a HAR in a directory", []string{"run/x.har", har("body.json"), "run/body.json", body}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.zip")
			if err := os.WriteFile(path, archive(tc.files...), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := store.ReadHARFile(path, store.HARImportOptions{})
			if err != nil || len(got.Sessions) != 1 || string(got.Sessions[0].Messages[0].Frame) != body {
				t.Errorf("%v, %+v", err, got)
			}
		})
	}
}
