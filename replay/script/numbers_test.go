package script

import (
	"strings"
	"testing"
	"text/template"
)

// TestTemplateCompare: eq, ne, lt, … compare a client's numbers by value,
// exactly, and other values as text/template's own functions do.
func TestTemplateCompare(t *testing.T) {
	var args map[string]any
	if err := decodeObject([]byte(`{"n":9007199254740993,"f":2.5,"s":"abc","b":true,"e":1e400}`), &args); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text, want string
	}{
		{"eq exact", `{{eq .n 9007199254740993}} {{eq .n 9007199254740992}}`, "true false"},
		{"eq float literal", `{{eq .f 2.5}} {{ne .f 2.5}}`, "true false"},
		{"eq any of", `{{eq .n 1 2 9007199254740993}}`, "true"},
		{"order", `{{lt .f 3}} {{le .f 2.5}} {{gt .n 9007199254740992}} {{ge .f 2.6}}`, "true true true false"},
		{"strings", `{{eq .s "abc"}} {{lt .s "abd"}} {{ne .s "x"}}`, "true true true"},
		{"booleans", `{{eq .b true}} {{eq .b false}}`, "true false"},
		{"missing", `{{eq .missing nil}}`, "true"},
		{"huge exponent equals itself", `{{.e}} {{eq .e .e}}`, "1e400 true"},
		{"printf", `{{printf "%d|%.1f|%e|%v|%s" .n .f .n .f .n}}`, "9007199254740993|2.5|9.007199e+15|2.5|9007199254740993"},
		{"not an integer for %d", `{{printf "%d" .f}}`, "%!d(number=2.5)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := template.Must(template.New("t").Funcs(funcs).Option("missingkey=zero").Parse(tt.text))
			var b strings.Builder
			if err := tmpl.Execute(&b, args); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
	for _, text := range []string{`{{eq .s 1}}`, `{{lt .b true}}`, `{{lt .n "1"}}`} {
		tmpl := template.Must(template.New("t").Funcs(funcs).Parse(text))
		if err := tmpl.Execute(&strings.Builder{}, args); err == nil || !strings.Contains(err.Error(), "comparison") {
			t.Errorf("%s: want a comparison error, got %v", text, err)
		}
	}
}
