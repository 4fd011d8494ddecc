package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"name", "answers", "upstream", "export", "tool", "inputSchema", "id", "kind"}
	tests := []struct {
		name, typed, want string
	}{
		{"a letter missing", "nme", "name"},
		{"a letter too many", "answerss", "answers"},
		{"singular for plural", "answer", "answers"},
		{"two letters off in a long name", "upstrm", "upstream"},
		{"neighbours swapped", "exprot", "export"},
		{"another case", "InputSchema", "inputSchema"},
		{"exact: nothing to suggest", "tool", ""},
		{"two off in a short name is too far", "tl", ""},
		{"unrelated", "colour", ""},
		{"empty", "", ""},
		{"a short name is close only in another case", "kd", ""},
		{"a short name in another case", "ID", "id"},
		{"runes, not bytes", "tööl", ""},
		{"one rune off", "toöl", "tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Nearest(tt.typed, known); got != tt.want {
				t.Errorf("Nearest(%q) = %q; want %q", tt.typed, got, tt.want)
			}
		})
	}
}

// Of two names as close, the earlier in known is proposed.
func TestNearest_Tie(t *testing.T) {
	if got := Nearest("tol", []string{"toll", "tool"}); got != "toll" {
		t.Errorf("Nearest = %q; want toll, the earlier", got)
	}
	if got := Nearest("tol", []string{"tool", "toll"}); got != "tool" {
		t.Errorf("Nearest = %q; want tool, the earlier", got)
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"ab", "ba", 1},
		{"abcd", "acbd", 1},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	if got := DidYouMean("upstrem", []string{"listen", "upstream"}, "--%s"); got != "; did you mean --upstream?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("zzz", []string{"listen"}, "--%s"); got != "" {
		t.Errorf("DidYouMean for nothing close = %q; want empty", got)
	}
}
