package mcphttp

import (
	"net/http"
	"testing"
)

func TestAccepts(t *testing.T) {
	tests := []struct {
		name   string
		accept []string
		want   [2]bool // application/json, text/event-stream
	}{
		{"both", []string{"application/json, text/event-stream"}, [2]bool{true, true}},
		{"two headers", []string{"application/json", "text/event-stream"}, [2]bool{true, true}},
		{"parameters and case", []string{"Application/JSON;q=0.9 ,text/event-stream; charset=utf-8"}, [2]bool{true, true}},
		{"JSON only", []string{"application/json"}, [2]bool{true, false}},
		{"ranges do not count", []string{"*/*, text/*, application/*"}, [2]bool{false, false}},
		{"none", nil, [2]bool{false, false}},
		{"a longer name is another type", []string{"application/jsonl, text/event-streamer"}, [2]bool{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Accept": tt.accept}
			got := [2]bool{Accepts(h, "application/json"), Accepts(h, "text/event-stream")}
			if got != tt.want {
				t.Errorf("Accepts(%q) = %v, want %v", tt.accept, got, tt.want)
			}
		})
	}
}
