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
// ("cassettes/x.db") is looked for elsewhere than its author thinks.
func TestLoad_MissingFileSaysWhere(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x.db", "x.jsonl", "x.har", "x.yaml", "x.json"} {
		t.Run(name, func(t *testing.T) {
			rel := filepath.Join("cassettes", name)
			got := loadFailure(t, rel)
			want := "(looked for " + filepath.Join(wd, rel) + ": go test runs in the package's directory)"
			if !strings.HasPrefix(got, "mocktest: ") || !strings.Contains(got, rel) || !strings.HasSuffix(got, want) {
				t.Errorf("Load(%q) failed with %q, want it to end %q", rel, got, want)
			}

			abs := filepath.Join(t.TempDir(), name) // says where already
			if got := loadFailure(t, abs); got == "" || strings.Contains(got, "looked for") {
				t.Errorf("Load(%q) failed with %q, want the path alone", abs, got)
			}
		})
	}
	// A file that is there but is no cassette says so, not where it looked.
	if got := loadFailure(t, "mocktest.go"); !strings.Contains(got, "not an mcptape cassette") || strings.Contains(got, "looked for") {
		t.Errorf("Load(mocktest.go) failed with %q", got)
	}
}
