package store_test

import (
	"testing"

	"github.com/mcptape/mcptape/store"
)

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ note, want string }{
		{"", ""},
		{"answered by mcpspy: upstream unreachable", "answered by mcpspy: upstream unreachable"},
		{"refused without a message: <html>\r\n<body>\n\n  Not Found</body>", "refused without a message: <html> <body> Not Found</body>"},
	} {
		if got := store.OneLine(tc.note); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.note, got, tc.want)
		}
	}
}
