package mocktest_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay/mocktest"
)

// fatalTB is failureTB whose Fatalf ends the goroutine, as testing's does.
type fatalTB struct{ failureTB }

func (f *fatalTB) Fatalf(format string, a ...any) { f.Errorf(format, a...); runtime.Goexit() }

// loadFailure runs Load(paths...) as a test of its own and returns what
// it failed with.
func loadFailure(t *testing.T, paths ...string) string {
	f := &fatalTB{failureTB{TB: t}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		mocktest.Load(f, paths...)
	}()
	<-done
	return f.failures()
}

// A cassette or script that is not there is named with the whole path it
// was looked for at when the test gave a relative one: go test runs in
// the package's directory, so a path written from the module root
// ("cassettes/x.db") is looked for elsewhere than its author thinks. A
// missing cassette says besides how to make one, at that path.
func TestLoad_MissingFileSaysWhere(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		how  string // how to make the file, after its absolute path; "" for a script
	}{
		{"x.db", "record one with mcpspy record -o ABS -- SERVER [ARG...], or have package vcr record it"},
		{"x.jsonl", "mcpspy export -o ABS CASSETTE.db makes one from a recording"},
		{"x.har", "mcpspy export --har -o ABS CASSETTE.db makes one from a recording over HTTP"},
		{"x.yaml", ""},
		{"x.json", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rel := filepath.Join("cassettes", tt.name)
			got := loadFailure(t, rel)
			want := "(looked for " + filepath.Join(wd, rel) + ": go test runs in the package's directory)"
			if tt.how != "" {
				want += "; " + strings.Replace(tt.how, "ABS", filepath.Join(wd, rel), 1)
			}
			if !strings.HasPrefix(got, "mocktest: ") || !strings.Contains(got, rel) || !strings.HasSuffix(got, want) {
				t.Errorf("Load(%q) failed with %q, want it to end %q", rel, got, want)
			}

			abs := filepath.Join(t.TempDir(), tt.name) // says where already
			got = loadFailure(t, abs)
			if strings.Contains(got, "looked for") || !strings.Contains(got, abs) {
				t.Errorf("Load(%q) failed with %q, want the path without where it looked", abs, got)
			}
			if tt.how == "" && strings.Contains(got, "mcpspy") { // a script is written, not recorded
				t.Errorf("Load(%q) failed with %q, want no command to make it", abs, got)
			}
			if want := strings.Replace(tt.how, "ABS", abs, 1); !strings.HasSuffix(got, want) {
				t.Errorf("Load(%q) failed with %q, want it to end %q", abs, got, want)
			}
		})
	}
	// A file that is there but is no cassette says so, not where it looked.
	if got := loadFailure(t, "mocktest.go"); !strings.Contains(got, "not an mcptape cassette") || strings.Contains(got, "looked for") {
		t.Errorf("Load(mocktest.go) failed with %q", got)
	}
}
