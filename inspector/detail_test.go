package inspector

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

func TestDurText(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"zero", 0, "0"},
		{"negative", -time.Second, "0"},
		{"microseconds", 850 * time.Microsecond, "850µs"},
		{"just under a millisecond rounds up", 999600 * time.Nanosecond, "1.0ms"},
		{"tenths of a millisecond", 12340 * time.Microsecond, "12.3ms"},
		{"just under 100ms rounds to whole milliseconds", 99960 * time.Microsecond, "100ms"},
		{"whole milliseconds", 305 * time.Millisecond, "305ms"},
		{"just under a second rounds to seconds", 999700 * time.Microsecond, "1.00s"},
		{"seconds", 1204 * time.Millisecond, "1.20s"},
		{"just under a minute rounds to minutes", 59996 * time.Millisecond, "1m00s"},
		{"minutes", 185 * time.Second, "3m05s"},
		{"seconds round within minutes", 3*time.Minute + 4600*time.Millisecond, "3m05s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := durText(tt.d)
			if got != tt.want {
				t.Errorf("durText(%v) = %q, want %q", tt.d, got, tt.want)
			}
			if tt.d < time.Hour && len([]rune(got)) > 6 {
				t.Errorf("durText(%v) = %q is wider than six characters", tt.d, got)
			}
		})
	}
}

// The sse line names only the fields an event had.
func TestHTTPSummary_SSEFields(t *testing.T) {
	tests := []struct {
		name string
		h    store.HTTPMeta
		want string // the sse line; "" none
	}{
		{"legacy message event", store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200, EventType: "message"}, `sse: event="message"`},
		{"id only", store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, EventID: "7"}, `sse: id="7"`},
		{"all three", store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 200, EventID: "0_3", EventType: "message", Retry: "3000"}, `sse: id="0_3" event="message" retry="3000"`},
		{"no event", store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			for _, l := range httpSummary(&tt.h) {
				if s := l.String(); strings.HasPrefix(s, "sse: ") {
					got = s
				}
			}
			if got != tt.want {
				t.Errorf("sse line %q, want %q", got, tt.want)
			}
		})
	}
}

// A frame that is not JSON folds its long lines as long strings fold,
// escaped all the same, and z shows them whole.
func TestPretty_MalformedFolds(t *testing.T) {
	long := "{\"jsonrpc\":\"2.0\",\"result\":\"" + strings.Repeat("é", 2000)
	tests := []struct {
		name   string
		frame  string
		unfold bool
		want   []string // the lines after the "not valid JSON" one
	}{
		{"short lines stay whole", "<h1>502</h1>\nBad \x1b[31mgateway", false, []string{"<h1>502</h1>", `Bad \u001b[31mgateway`}},
		{"a long line folds at a character", long, false, []string{`{"jsonrpc":"2.0","result":"` + strings.Repeat("é", 16) + `… ‹3.9 KiB more; z unfolds›`}},
		{"z unfolds it", long, true, []string{long}},
		{"only the long line folds", "short\n" + strings.Repeat("\xff", 200), false, []string{"short", strings.Repeat(`\xff`, 60) + "… ‹140 B more; z unfolds›"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := Pretty([]byte(tt.frame), tt.unfold)
			var got []string
			for _, l := range lines[1:] {
				got = append(got, l.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("lines\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
