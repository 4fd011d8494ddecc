// Package script is mcpmock's hand-written fake server: a YAML (or JSON)
// script of tools, answers, errors, delays, progress, pagination, faults
// and list_changed events, served as a replay.Source.
//
// A script is checked completely when it loads: every problem is reported
// with file:line and the field path, and nothing is served half-configured.
// Serving never reads the clock or random numbers (delays only wait), so the
// same client traffic always gets the same bytes. docs/SCRIPTS.md describes
// the format for users.
package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/jsonerr"
	"github.com/mcptape/mcptape/replay"
)

// Load reads and validates a script and returns it as a source. Errors name
// file:line and the field path; a script with any error is refused whole.
func Load(path string) (replay.Source, error) {
	s, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Check validates a script without serving it.
func Check(path string) error {
	_, err := loadFile(path)
	return err
}

func loadFile(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	if strings.EqualFold(filepath.Ext(path), ".json") && len(bytes.TrimSpace(data)) > 0 {
		// YAML reads JSON, and more: a trailing comma, a comment. A
		// .json script must be JSON, for the other tools that read it.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			je := &jsonerr.Error{Line: 1, Col: 1, Msg: err.Error()}
			if errors.As(jsonerr.File(path, data, err), &je) && je.Line == 0 {
				je.Line, je.Col = 1, 1 // a fault of the whole file (cut short)
			}
			return nil, &Error{File: path, Pos: Pos{Line: je.Line, Col: je.Col}, Msg: "not valid JSON: " + je.Msg}
		}
	}
	return Parse(path, data)
}

// Parse compiles a script held in memory; name is used in errors. The
// result is a replay.Source.
func Parse(name string, data []byte) (*Script, error) {
	d := &decoder{file: name}
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Pos: Pos{Line: 1, Col: 1}, Msg: "the script is empty"}
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Pos: Pos{Line: extra.Line, Col: extra.Column}, Msg: "a script is one YAML document; found a second one"}
	}
	d.decode(&root, "", reflectValue(&f))
	if len(d.errs) > 0 {
		return nil, d.errs.inFileOrder()
	}
	s := compile(d, &f)
	if len(d.errs) > 0 {
		return nil, d.errs.inFileOrder()
	}
	return s, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns yaml.v3's "yaml: line N: msg" into file:line form.
func yamlError(name string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Pos: Pos{Line: line, Col: 1}, Msg: "not valid YAML or JSON: " + m[2]}
	}
	return &Error{File: name, Pos: Pos{Line: 1, Col: 1}, Msg: "not valid YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// Name implements replay.Source.
func (s *Script) Name() string { return filepath.Base(s.file) }

// Unused implements replay.Source: a script has no recorded interactions.
func (s *Script) Unused() []string { return nil }

// InputSchema returns a tool's inputSchema as tools/list serves it (its
// events' tools included), for mcpmock's check of Mcp-Param-* headers.
func (s *Script) InputSchema(tool string) (json.RawMessage, bool) {
	for _, t := range s.allTools() {
		if t.name == tool {
			var def struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if json.Unmarshal(t.def, &def) == nil {
				return def.InputSchema, true
			}
		}
	}
	return nil, false
}

// HTTPSessions implements replay.HTTPSessionPolicy: server.sessions, if
// the script says.
func (s *Script) HTTPSessions() (issue, said bool) {
	if s.sessions == nil {
		return false, false
	}
	return *s.sessions, true
}

// Open implements replay.Source: each session starts from the script's
// initial state (its tools, call counts at zero, no event fired).
func (s *Script) Open() replay.SessionSource { return newSession(s) }
