package inspector

import (
	"testing"
	"time"
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
