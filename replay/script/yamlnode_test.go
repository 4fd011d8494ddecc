package script

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestEncodeYAML_Astral: strings with characters beyond the Basic
// Multilingual Plane (emoji) are written as any other string (a block for
// several lines), not double-quoted with \U escapes, and read back the
// same; a private-use character already in the document is not taken for
// a stand-in, and the document is left as it was.
func TestEncodeYAML_Astral(t *testing.T) {
	values := map[string]string{
		"block":   "first line 🎉\nsecond 🦀 line\n",
		"plain":   "cassette 📼 ready",
		"private": "\uE000 is used, and so is 📼",
		"🔑":       "an astral key",
	}
	m := newMap()
	for _, k := range []string{"block", "plain", "private", "🔑"} {
		m.set(k, strNode(values[k]))
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{m.n}}
	out, err := encodeYAML(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if strings.Contains(text, `\U`) || !strings.Contains(text, "block: |\n  first line 🎉\n") {
		t.Errorf("want the emoji as they are, the block as a block:\n%s", text)
	}
	var back map[string]string
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for k, want := range values {
		if back[k] != want {
			t.Errorf("%q read back as %q, want %q\n%s", k, back[k], want, text)
		}
	}
	if got := m.n.Content[1].Value; got != values["block"] {
		t.Errorf("the document was changed: %q", got)
	}
}
