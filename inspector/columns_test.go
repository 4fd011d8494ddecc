package inspector

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// TestKeepMarks: a method column too narrow for its text is cut before
// the marks, which stay whole; where they alone would not fit, the text
// is left for the table to cut at its end.
func TestKeepMarks(t *testing.T) {
	long := "tools/call trigger-long-running-operation"
	tests := []struct {
		name, text, marks string
		w                 int
		want              string
	}{
		{"fits", "tools/call echo [isError]", " [isError]", 30, "tools/call echo [isError]"},
		{"exactly", "tools/call echo [isError]", " [isError]", 25, "tools/call echo [isError]"},
		{"cancelled", long + " [cancelled]", " [cancelled]", 30, "tools/call trigge… [cancelled]"},
		{"error code", long + " [-32602]", " [-32602]", 20, "tools/call… [-32602]"},
		{"two marks", "tools/call ask [input required] [cancelled]", " [input required] [cancelled]", 35, "tools… [input required] [cancelled]"},
		{"runes", "tools/call ééééééééééé [isError]", " [isError]", 18, "tools/c… [isError]"},
		{"no marks", long, "", 20, long},
		{"marks alone too wide", long + " [cancelled]", " [cancelled]", 12, long + " [cancelled]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := keepMarks(tt.text, tt.marks, tt.w)
			if got != tt.want {
				t.Errorf("keepMarks(%q, %q, %d) = %q, want %q", tt.text, tt.marks, tt.w, got, tt.want)
			}
			if n := len([]rune(got)); got != tt.text && n != tt.w {
				t.Errorf("%q is %d runes, want %d", got, n, tt.w)
			}
		})
	}
}

func TestCutMiddle(t *testing.T) {
	tests := []struct {
		name, in string
		w        int
		want     string
	}{
		{"fits", `"1"`, 6, `"1"`},
		{"exactly", "123456", 6, "123456"},
		{"number", "123456789012", 6, "1…9012"},
		{"uuid", `"3f2a9c1e-aaaa-bbbb-cccc-5b6c"`, 6, `"…b6c"`},
		{"wider", `"3f2a9c1e-aaaa-bbbb-cccc-5b6c"`, 10, `"3f…-5b6c"`},
		{"runes", "ééééééééé", 6, "é…éééé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cutMiddle(tt.in, tt.w); got != tt.want {
				t.Errorf("cutMiddle(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
			}
		})
	}
}

// manyPings is a session of n pings from the client.
func manyPings(n int) []frame {
	out := make([]frame, n)
	for i := range out {
		out[i] = frame{store.C2S, time.Duration(i) * time.Microsecond, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)}
	}
	return out
}

func TestModel_SeqLabelWidth(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession, manyPings(10013)))
	tests := []struct {
		name  string
		scope int
		want  int
	}{
		{"all sessions: s2:10013", -1, 8},
		{"one session: 13", 0, 2},
		{"the other: 10013", 1, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := m.SetScope(tt.scope, src); err != nil {
				t.Fatal(err)
			}
			if got := m.seqLabelWidth(); got != tt.want {
				t.Errorf("seqLabelWidth = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestView_IDsAndSeqsStayApart: ids too long for their column keep their
// end, and the seq column is as wide as its widest label.
func TestView_IDsAndSeqsStayApart(t *testing.T) {
	ids := []frame{
		{store.C2S, 0, `{"jsonrpc":"2.0","id":"3f2a9c1e-aaaa-bbbb-cccc-5b6c","method":"ping"}`},
		{store.C2S, time.Millisecond, `{"jsonrpc":"2.0","id":"3f2a9c1e-aaaa-bbbb-cccc-5b6d","method":"ping"}`},
		{store.C2S, 2 * time.Millisecond, `{"jsonrpc":"2.0","id":123456789012,"method":"ping"}`},
	}
	m, src := openModel(t, writeCassette(t, ids, manyPings(10013)))
	h := startApp(t, m, src, Options{}, 80, 24)
	h.waitFor(wait, []string{`"…b6c"`, `"…b6d"`, "1…9012", "s1:1 "})
	h.keys("G")
	h.waitFor(wait, []string{"s2:10013", "10013"}, "s2:1001…")
}
