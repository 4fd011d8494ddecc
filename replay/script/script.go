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
	"github.com/mcptape/mcptape/internal/utf8bom"
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

// notJSONHint names what YAML would have taken in a .json script, and
// JSON does not: a trailing comma, a comment. encoding/json only names the
// character after it, and the same text loads as .yaml, which puzzles.
func notJSONHint(data []byte, err error) string {
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) || syntax.Offset < 1 || syntax.Offset > int64(len(data)) {
		return ""
	}
	at := syntax.Offset - 1 // the byte at fault
	switch before := bytes.TrimRight(data[:at], " \t\r\n"); {
	case (data[at] == ']' || data[at] == '}') && bytes.HasSuffix(before, []byte(",")):
		return "; a trailing comma before it, which JSON does not allow (YAML does: name the file .yaml to keep it)"
	case data[at] == '/' || data[at] == '#':
		return "; JSON has no comments (YAML does, with #: name the file .yaml to keep them)"
	}
	return ""
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
	// YAML passes over a byte order mark (a Windows editor's), JSON
	// does not.
	data = utf8bom.Trim(data)
	if strings.EqualFold(filepath.Ext(path), ".json") && len(bytes.TrimSpace(data)) > 0 {
		// YAML reads JSON, and more: a trailing comma, a comment. A
		// .json script must be JSON, for the other tools that read it.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			je := &jsonerr.Error{Line: 1, Col: 1, Msg: err.Error()}
			if errors.As(jsonerr.File(path, data, err), &je) && je.Line == 0 {
				je.Line, je.Col = 1, 1 // a fault of the whole file (cut short)
			}
			return nil, &Error{File: path, Pos: Pos{Line: je.Line, Col: je.Col}, Msg: "not valid JSON: " + je.Msg + notJSONHint(data, err)}
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
		return nil, yamlError(name, data, err)
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

// yamlError turns yaml.v3's "yaml: line N: msg" about data into
// file:line form, at the line where the problem is.
//
// yaml.v3 names the line of the construct the parser was in, not of the
// problem: a list item indented one space short is reported at the
// "tools:" that holds the list, maybe hundreds of lines above it. The
// problem is where the document stops parsing: the first line whose
// prefix of the document fails as the whole does (a prefix that ends
// inside a quoted string or a flow collection that a later line closes
// fails otherwise, and is passed over). A binary search finds it in a
// few parses, on the error path only.
func yamlError(name string, data []byte, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{File: name, Pos: Pos{Line: 1, Col: 1}, Msg: "not valid YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	lines := bytes.SplitAfter(data, []byte("\n"))
	failsAlike := func(n int) bool { // the first n lines fail as data does
		var node yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:n], nil), &node)
		sub := yamlLine.FindStringSubmatch(fmt.Sprint(err))
		return sub != nil && sub[2] == msg
	}
	lo, hi := max(line, 1), len(lines) // failsAlike(hi) holds
	if lo > hi || !failsAlike(hi) {
		return &Error{File: name, Pos: Pos{Line: line, Col: 1}, Msg: "not valid YAML or JSON: " + msg}
	}
	for lo < hi {
		if mid := (lo + hi) / 2; failsAlike(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	col := 1 + len(lines[hi-1]) - len(bytes.TrimLeft(lines[hi-1], " "))
	if hi != line {
		msg += fmt.Sprintf(" (in the part that begins at line %d)", line)
	}
	switch {
	case strings.HasPrefix(msg, "did not find expected key"), strings.HasPrefix(msg, "did not find expected '-'"), strings.Contains(msg, "indentation"):
		msg += "; check this line's indentation"
	case strings.HasPrefix(msg, "found unexpected end of stream"):
		msg += "; a quote, [ or { this line opens is never closed"
	case strings.HasPrefix(msg, "found character that cannot start any token") && col <= len(lines[hi-1]) && lines[hi-1][col-1] == '\t':
		// An editor's tab looks like indentation, but YAML takes none.
		msg += "; a tab indents this line, and YAML indents with spaces only"
	}
	return &Error{File: name, Pos: Pos{Line: hi, Col: col}, Msg: "not valid YAML or JSON: " + msg}
}

// Name implements replay.Source.
func (s *Script) Name() string { return filepath.Base(s.file) }

// Unused implements replay.Source: a script has no recorded interactions.
func (s *Script) Unused() []string { return nil }

// Whole says whether the script has a server section, and so is a whole
// server that answers initialize; without one it is an override, which
// answers only calls of what it names and needs a source after it.
func (s *Script) Whole() bool { return s.owner }

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
