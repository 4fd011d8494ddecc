package vcr_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/vcr"
)

// A missing cassette given as a relative path is named with the whole
// path it was looked for at: go test runs in the package's directory, so
// "testdata/x.db" written from the module root is looked for elsewhere
// than its author thinks. Neither run below reaches the server; each says
// how to make the cassette.
func TestNew_MissingCassetteSaysWhere(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join("testdata", "no-such-cassette.db")
	want := "(looked for " + filepath.Join(wd, rel) + ": go test runs in the package's directory)"
	for _, tt := range []struct {
		name    string
		command []string
		opts    []vcr.Option
		wantLog string
	}{
		{"this run only replays", []string{"/no/such/server"}, []vcr.Option{vcr.WithMode(vcr.ReplayOnly)}, "does not exist " + want + ", and this run only replays"},
		{"no command to record from", nil, nil, "does not exist " + want + " and there is no server command to record it from; give New the command, or record it with mcpspy record -o " + filepath.Join(wd, rel) + " -- SERVER [ARG...]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(vcr.EnvMode, "")
			f := runFake(t, func(tb *fakeTB) { vcr.New(tb, rel, tt.command, tt.opts...) })
			if !f.Failed() || !strings.Contains(f.log(), tt.wantLog) {
				t.Errorf("failed %v, log:\n%s\nwant it to hold %q", f.Failed(), f.log(), tt.wantLog)
			}
		})
	}
}
