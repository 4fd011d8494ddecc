// Package script is mcpmock's hand-written fake server: a YAML (or JSON)
// script of tools, answers, errors, delays, progress, pagination, faults
// and list_changed events, served as a replay.Source.
package script

import (
	"errors"

	"github.com/mcptape/mcptape/replay"
)

// errNotYet marks the script source as not built yet.
var errNotYet = errors.New("mcpmock scripts are not implemented yet")

// Load reads and validates a script and returns it as a source. Errors name
// file:line and the field path.
func Load(path string) (replay.Source, error) { return nil, errNotYet }

// Check validates a script without serving it.
func Check(path string) error { return errNotYet }
