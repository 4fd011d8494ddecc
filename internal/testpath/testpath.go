// Package testpath says where a relative path in a test leads. go test
// runs each package's tests in that package's directory, not in the one
// the go command was typed in, so "cassettes/x.db" written from the
// module root is looked for somewhere else: an error about a missing file
// shows the whole path it looked for.
package testpath

import (
	"fmt"
	"path/filepath"
)

// Where returns " (looked for ABS: go test runs in the package's
// directory)" for a relative path, to put after an error that says the
// file does not exist, and "" for an absolute path, which says it all.
func Where(path string) string {
	if filepath.IsAbs(path) {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "" // no working directory to name
	}
	return fmt.Sprintf(" (looked for %s: go test runs in the package's directory)", abs)
}
