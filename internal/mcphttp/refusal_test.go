package mcphttp

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRefusalHeader(t *testing.T) {
	tests := []struct {
		name     string
		recorded http.Header
		withBody bool
		want     http.Header
	}{
		{"nothing recorded", nil, false, nil},
		{"what a client acts on, canonical", http.Header{"retry-after": {"30"}, "WWW-Authenticate": {`Bearer realm="x"`}, "Allow": {"POST"}, "X-RateLimit-Reset": {"60"}},
			false, http.Header{"Retry-After": {"30"}, "Www-Authenticate": {`Bearer realm="x"`}, "Allow": {"POST"}, "X-Ratelimit-Reset": {"60"}}},
		{"not the server's own", http.Header{"Date": {"d"}, "Content-Length": {"3"}, "Mcp-Session-Id": {"s"}, "Connection": {"close"}, "Server": {"x"}, "Content-Encoding": {"gzip"}},
			false, nil},
		{"Content-Type with a body only", http.Header{"Content-Type": {"application/json"}}, false, nil},
		{"Content-Type with its body", http.Header{"Content-Type": {"application/json"}}, true, http.Header{"Content-Type": {"application/json"}}},
		{"redacted values left out", http.Header{"Www-Authenticate": {"[redacted]", "Basic"}, "Retry-After": {"[redacted]"}},
			false, http.Header{"Www-Authenticate": {"Basic"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RefusalHeader(tt.recorded, tt.withBody)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRefusalHeader(t *testing.T) {
	tests := []struct {
		name, header, value string
		want                string // in the error; "" for none
	}{
		{"fine", "Retry-After", "30", ""},
		{"any name a server may send", "X-Custom", "a\tb", ""},
		{"not a token", "Retry After", "30", "not a header name"},
		{"empty", "", "x", "not a header name"},
		{"owned", "content-length", "3", "Content-Length is set by mcpmock"},
		{"session", "Mcp-Session-Id", "x", "Mcp-Session-Id is set by mcpmock"},
		{"newline", "Retry-After", "1\r\nX: y", "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRefusalHeader(tt.header, tt.value)
			if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckRefusalHeader(%q, %q) = %v, want %q", tt.header, tt.value, err, tt.want)
			}
		})
	}
}
