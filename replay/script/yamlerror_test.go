package script

import (
	"errors"
	"testing"
)

// A YAML syntax error is reported at the line where the problem is, not
// at the line of the mapping or list yaml.v3 was in (which it names).
func TestParse_YAMLSyntaxErrorLine(t *testing.T) {
	const head = "server: {name: a, version: \"1\"}\ntools:\n  - name: echo\n"
	tests := []struct {
		name      string
		text      string
		line, col int
		msg       string
	}{
		{"a list item indented short", head + "    answers:\n      - text: hi\n     - text: there\n", 6, 6,
			"not valid YAML or JSON: did not find expected key (in the part that begins at line 2); check this line's indentation"},
		{"a key indented short, far below its mapping", head + "    description: d\n    answers:\n      - text: a\n      - text: b\n      - text: c\n   inputSchema: {type: object}\n", 9, 4,
			"not valid YAML or JSON: did not find expected '-' indicator (in the part that begins at line 2); check this line's indentation"},
		{"a tab", head + "    answers:\n      - text: hi\n\t- text: tab\n", 6, 1,
			"not valid YAML or JSON: found a tab character that violates indentation (in the part that begins at line 5); check this line's indentation"},
		{"a tab where a key starts", "server:\n\tname: a\n  version: \"1\"\n", 2, 1,
			"not valid YAML or JSON: found character that cannot start any token; a tab indents this line, and YAML indents with spaces only"},
		{"a tab after spaces", head + "    answers:\n  \t- text: tab\n", 5, 3,
			"not valid YAML or JSON: found character that cannot start any token; a tab indents this line, and YAML indents with spaces only"},
		{"a quote never closed", head + "    answers:\n      - text: \"hi\n      - text: there\n", 5, 7,
			"not valid YAML or JSON: found unexpected end of stream; a quote, [ or { this line opens is never closed"},
		{"a flow list never closed", head + "    answers: [{text: hi}\n  - name: two\n", 4, 5,
			"not valid YAML or JSON: did not find expected ',' or ']' (in the part that begins at line 3)"},
		// What spans lines and is closed is passed over.
		{"after a flow list and a quoted string that span lines", head + "    answers: [\n      {text: a},\n      {text: \"b\n        c\"}]\n    description: x\n   bad: y\n", 9, 4,
			"not valid YAML or JSON: did not find expected '-' indicator (in the part that begins at line 2); check this line's indentation"},
		{"a mapping value where none may be", head + "    description: a: b\n", 4, 5, "not valid YAML or JSON: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.text))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse: %v; want an *Error", err)
			}
			if e.Line != tt.line || e.Col != tt.col || e.Msg != tt.msg {
				t.Errorf("got %d:%d %q\nwant %d:%d %q", e.Line, e.Col, e.Msg, tt.line, tt.col, tt.msg)
			}
		})
	}
}
