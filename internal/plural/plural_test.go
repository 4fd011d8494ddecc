package plural

import (
	"fmt"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		n    int
		noun string
		want string
	}{
		{1, "session", "1 session"},
		{2, "session", "2 sessions"},
		{0, "message", "0 messages"},
		{1, "msg", "1 msg"},
		{0, "msg", "0 msgs"},
		{1, "entry", "1 entry"},
		{2, "entry", "2 entries"},
		{2, "key", "2 keys"},
		{1, "recorded request", "1 recorded request"},
		{1, "message is", "1 message is"},
		{3, "message is", "3 messages are"},
		{2, "entry is", "2 entries are"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Count(tt.n, tt.noun); got != tt.want {
				t.Errorf("Count(%d, %q) = %q", tt.n, tt.noun, got)
			}
		})
	}
}

func ExampleCount() {
	fmt.Println(Count(1, "recorded request"), "/", Count(0, "session"), "/", Count(2, "entry"))
	// Output: 1 recorded request / 0 sessions / 2 entries
}
