package inspector

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// TestOpen_BadInput: every bad file gives one line naming the file and
// the problem, and never a panic.
func TestOpen_BadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeCassette(t, sampleSession)
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The format version sits in the meta bucket's leaf as key "version"
	// followed by its value; bbolt keeps no checksum on leaf pages.
	newer := bytes.ReplaceAll(raw, []byte("version1"), []byte("version9"))
	if bytes.Equal(newer, raw) {
		t.Fatal("could not find the format version in the file")
	}
	garbled := append([]byte(nil), raw...)
	for i := 2 * 4096; i < len(garbled); i++ {
		garbled[i] = byte(i*7 + 3)
	}
	tests := []struct {
		name, path string
		is         error
		want       string
	}{
		{"missing", filepath.Join(dir, "nope.db"), store.ErrNotFound, "does not exist"},
		{"empty", write("empty.db", nil), store.ErrNotCassette, "not an mcptape cassette"},
		{"text file", write("notes.db", []byte("hello, not a database\n")), store.ErrNotCassette, "not an mcptape cassette"},
		{"newer format", write("newer.db", newer), store.ErrNewerFormat, "newer"},
		{"damaged pages", write("garbled.db", garbled), nil, "garbled.db"},
		{"truncated", write("short.db", raw[:5000]), nil, "short.db"},
		{"bad jsonl", write("bad.jsonl", []byte("{\"session\":\"s1\",\"seq\":1}\n")), store.ErrJSONL, "bad.jsonl:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Open(tt.path)
			if err == nil {
				t.Fatal("opened a bad file")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line containing %q", msg, tt.want)
			}
		})
	}
}

func TestPretty(t *testing.T) {
	tests := []struct {
		name, in string
		unfold   bool
		want     []string
	}{
		{"object", `{"a":1,"b":[true,null,"x"],"c":{}}`, false, []string{"{", `  "a": 1,`, `  "b": [`, "    true,", "    null,", `    "x"`, "  ],", `  "c": {}`, "}"}},
		{"scalar", `42`, false, []string{"42"}},
		{"empty array", `[]`, false, []string{"[]"}},
		{"long string folds", `{"t":"` + strings.Repeat("word ", 40) + `"}`, false, []string{"{", `  "t": "` + strings.Repeat("word ", 12) + `…" ‹140 more chars; z unfolds›`, "}"}},
		{"unfolded", `{"t":"` + strings.Repeat("ab", 40) + `"}`, true, []string{"{", `  "t": "` + strings.Repeat("ab", 40) + `"`, "}"}},
		{"not json", `oops {`, false, []string{"not valid JSON: invalid character 'o' looking for beginning of value", "oops {"}},
		{"two values", `{} {}`, false, []string{"not valid JSON: more than one JSON value", "{} {}"}},
		{"truncated", `{"a":`, false, []string{"not valid JSON: unexpected EOF", `{"a":`}},
		{"HTML's characters as sent", `{"a<b":"x < y & z"}`, false, []string{"{", `  "a<b": "x < y & z"`, "}"}},
		{"hidden and reordering characters shown", "{\"t\":\"a\u200bb\u202ec\ufeff\"}", false, []string{"{", `  "t": "a\u200bb\u202ec\ufeff"`, "}"}},
		{"folded, still shown", `{"t":"\u202e` + strings.Repeat("w", 200) + `"}`, false, []string{"{", `  "t": "\u202e` + strings.Repeat("w", 59) + `…" ‹141 more chars; z unfolds›`, "}"}},
		{"a malformed frame's escape sequences", "oops \x1b[2J\r\xff", false, []string{"not valid JSON: invalid character 'o' looking for beginning of value", `oops \u001b[2J\r\xff`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range Pretty([]byte(tt.in), tt.unfold) {
				got = append(got, l.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
