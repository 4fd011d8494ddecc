package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// The scanner skips plain string bytes eight at a time; a byte that ends
// a string or needs a look (a quote, a backslash, a control byte) must be
// seen wherever it falls in the word, and bytes on either side of 0x20,
// '"' and '\\' must not be taken for one. encoding/json is the judge.
func TestScanner_StringBytesAtEveryOffset(t *testing.T) {
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, "\x00", "\x01", "\x1f", " ", "!", "#", "[", "]", "\x7f", "é", "\xff", `"`, `\`, `\x`}
	for _, sp := range specials {
		for at := 0; at <= 20; at++ {
			for tail := 0; tail <= 9; tail++ {
				text := strings.Repeat("a", at) + sp + strings.Repeat("b", tail)
				frame := []byte(`{"k":"` + text + `","n":1}`)
				var got []string
				ok := Members(frame, func(name, v []byte) { got = append(got, string(name)+"="+string(v)) })
				if want := json.Valid(frame); ok != want {
					t.Fatalf("%q: scanner says valid=%v, encoding/json %v", frame, ok, want)
				}
				if ok && (len(got) != 2 || got[0] != `k="`+text+`"` || got[1] != "n=1") {
					t.Fatalf("%q: members %q", frame, got)
				}
			}
		}
	}
}

func TestMember(t *testing.T) {
	tests := []struct {
		name, in string
		path     []string
		want     string // "" for nil
	}{
		{"top level", `{"a":1,"b":"x"}`, []string{"b"}, `"x"`},
		{"a path", `{"params":{"taskId":"T1"}}`, []string{"params", "taskId"}, `"T1"`},
		{"an escaped name", `{"params":{"t\u0061skId":"T1"}}`, []string{"params", "taskId"}, `"T1"`},
		{"the last of repeated names", `{"a":1,"a":2}`, []string{"a"}, `2`},
		{"missing", `{"params":{}}`, []string{"params", "taskId"}, ``},
		{"not an object on the way", `{"params":[1]}`, []string{"params", "taskId"}, ``},
		{"not valid", `{"a":1,`, []string{"a"}, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Member([]byte(tt.in), tt.path...)); got != tt.want {
				t.Errorf("Member(%s, %q) = %q, want %q", tt.in, tt.path, got, tt.want)
			}
		})
	}
}
