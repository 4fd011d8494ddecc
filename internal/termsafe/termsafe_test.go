package termsafe

import (
	"encoding/json"
	"testing"
)

func TestLine(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", `tools/call echo "id-1"`, `tools/call echo "id-1"`},
		{"letters of any script", "héllo 東京 🙂 مرحبا", "héllo 東京 🙂 مرحبا"},
		{"a forged line", "x\ntouch /tmp/pwned", `x\ntouch /tmp/pwned`},
		{"carriage return and tab", "a\rb\tc", `a\rb\tc`},
		{"escape sequence", "red \x1b[31m!", `red \u001b[31m!`},
		{"DEL and a C1 control", "a\x7fb\u009bc", `a\u007fb\u009bc`},
		{"invisible and reordering", "a\u200bb\u202ec\ufeffd", `a\u200bb\u202ec\ufeffd`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"not UTF-8", "a\xffb", `a\xffb`},
		{"the replacement character itself", "a\ufffdb", "a\ufffdb"},
		{"a tag outside the BMP", "a\U000e0041b", `a\U000e0041b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBody(t *testing.T) {
	if got, want := Body("a\tb\nc\x1bd\re"), "a\tb\nc\\u001bd\\re"; got != want {
		t.Errorf("Body = %q, want %q", got, want)
	}
}

// An escaped JSON string is still the same string to a JSON reader.
func TestLine_KeepsJSON(t *testing.T) {
	in := `{"text":"a` + "\u202e\u200b\x7f" + `b"}`
	var a, b map[string]string
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(Line(in)), &b); err != nil {
		t.Fatalf("%s: %v", Line(in), err)
	}
	if a["text"] != b["text"] {
		t.Errorf("escaped %q reads %q, want %q", Line(in), b["text"], a["text"])
	}
}

// Nothing to escape: the string itself comes back, no copy.
func TestLine_NoCopy(t *testing.T) {
	s := "tools/call echo"
	if n := testing.AllocsPerRun(100, func() { _ = Line(s) }); n != 0 {
		t.Errorf("Line of plain text allocated %v times", n)
	}
}
