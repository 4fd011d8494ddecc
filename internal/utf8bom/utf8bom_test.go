package utf8bom

import (
	"io"
	"strings"
	"testing"
)

func TestReaderAndTrim(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a mark", "\ufeff{\"a\":1}\n", "{\"a\":1}\n"},
		{"no mark", "{\"a\":1}\n", "{\"a\":1}\n"},
		{"a mark only", "\ufeff", ""},
		{"empty", "", ""},
		{"two bytes of one", "\xef\xbb", "\xef\xbb"},
		{"a mark later is text", "{}\ufeff", "{}\ufeff"},
		{"only the first of two", "\ufeff\ufeff{}", "\ufeff{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := io.ReadAll(Reader(strings.NewReader(tt.in)))
			if err != nil || string(got) != tt.want {
				t.Errorf("Reader: %q, %v; want %q", got, err, tt.want)
			}
			if got := Trim([]byte(tt.in)); string(got) != tt.want {
				t.Errorf("Trim: %q; want %q", got, tt.want)
			}
		})
	}
}
