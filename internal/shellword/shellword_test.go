package shellword

import (
	"os/exec"
	"testing"
)

// Each word, written by Word or Quote and echoed by a real shell, comes
// back as it was; plain words stay bare.
func TestWord_ShellReadsItBack(t *testing.T) {
	for _, tc := range []struct {
		name, word string
		bare       bool
	}{
		{"plain", "mcpspy", true},
		{"path and url", "http://127.0.0.1:3001/mcp,x=1", true},
		{"query", "http://h/mcp?x=1", false},
		{"empty", "", false},
		{"space", "memory@My App", false},
		{"quote", "it's", false},
		{"dollar and backtick", "$HOME `id`", false},
		{"glob", "*.db", false},
		{"newline", "a\nb", false},
		{"non-ASCII", "café", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Word(tc.word)
			if (w == tc.word) != tc.bare {
				t.Errorf("Word(%q) = %q; want it bare: %v", tc.word, w, tc.bare)
			}
			for _, written := range []string{w, Quote(tc.word)} {
				out, err := exec.Command("sh", "-c", "printf %s "+written).Output()
				if err != nil || string(out) != tc.word {
					t.Errorf("sh read %s as %q (%v), want %q", written, out, err, tc.word)
				}
			}
		})
	}
}
