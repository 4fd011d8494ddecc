package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// A pipe (a shell's <(mcpspy export x.db), /dev/stdin) is read once, so
// what it holds is decided as it is read: an export or a HAR reads, a
// cassette is refused with the reason.
func TestLoad_Pipe(t *testing.T) {
	for _, tt := range []struct {
		name    string
		shipped string
		wantErr string
	}{
		{"an export", "everything-stdio.jsonl", ""},
		{"a HAR", "everything-http.har", ""},
		{"a cassette", "everything-stdio.db", "a bbolt cassette cannot be read from a pipe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "cassettes", tt.shipped))
			if err != nil {
				t.Fatal(err)
			}
			path, done := peertest.PipePath(t, b)
			if got := KindOf(path); got != KindStream {
				t.Errorf("KindOf = %d, want KindStream", got)
			}
			tape, err := Load(path)
			done() // a refused cassette is not read to its end: let the writer go
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr == "" && len(tape.Sessions) == 0:
				t.Error("no session read")
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}
