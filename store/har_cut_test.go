package store_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/jsonerr"
	"github.com/mcptape/mcptape/store"
)

// A HAR cut short (a save or a download interrupted) says where it ends
// and how far into log.entries it got. The HAR is a real one, saved from
// Chromium's DevTools: its page comes before its twelve entries, and each
// entry has one startedDateTime, by which the test finds where entries
// begin without reading the HAR as the code under test does.
func TestImportHAR_CutShort(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "devtools-chromium.har"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	entries := strings.Index(doc, `"entries": [`)
	if entries < 0 {
		t.Fatal(`no "entries": [ in the HAR`)
	}
	// inEntry(k) is an offset inside entry k (1-based), past its
	// startedDateTime's key.
	inEntry := func(k int) int {
		at := entries
		for range k {
			next := strings.Index(doc[at:], `"startedDateTime"`)
			if next < 0 {
				t.Fatalf("the HAR has fewer than %d entries", k)
			}
			at += next + len(`"startedDateTime"`)
		}
		return at
	}
	for _, tc := range []struct {
		name string
		cut  int
		want string
	}{
		{"in the page", strings.Index(doc, `"pages"`) + 20, "the HAR ends early (cut short?), before log.entries"},
		{"in the first entry", entries + len(`"entries": [`), "the HAR ends early (cut short?) in entry 1 of log.entries"},
		{"in the second entry", inEntry(2), "the HAR ends early (cut short?) in entry 2 of log.entries; the one before it is whole"},
		{"in the last entry", inEntry(12), "the HAR ends early (cut short?) in entry 12 of log.entries; the 11 before it are whole"},
		{"after the entries", strings.LastIndex(doc, "]") + 1, "the HAR ends early (cut short?), after log.entries (12 entries, all whole)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut := doc[:tc.cut]
			line := strings.Count(cut, "\n") + 1
			col := len(cut) - strings.LastIndex(cut, "\n")
			want := fmt.Sprintf("x.har:%d:%d: %s", line, col, tc.want)
			_, err := store.ImportHAR(strings.NewReader(cut), "x.har", store.HARImportOptions{})
			if err == nil || err.Error() != want {
				t.Fatalf("error %v\nwant  %s", err, want)
			}
			var located *jsonerr.Error
			if !errors.As(err, &located) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("error %#v: want a *jsonerr.Error wrapping io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// The position is the end of the text, counted as an editor counts it.
func TestImportHAR_CutShortPosition(t *testing.T) {
	_, err := store.ImportHAR(strings.NewReader("{\"log\":\n {\"entries\": [{"), "x.har", store.HARImportOptions{})
	if want := "x.har:2:16: the HAR ends early (cut short?) in entry 1 of log.entries"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
