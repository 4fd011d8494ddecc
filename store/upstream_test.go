package store

import "testing"

func TestParseUpstream(t *testing.T) {
	tests := []struct {
		name, upstream string
		want           UpstreamURL
		ok             bool
	}{
		{"plain", "http://127.0.0.1:3001/mcp", UpstreamURL{"http", "127.0.0.1:3001", "127.0.0.1:3001", "/mcp"}, true},
		{"redacted password", "https://u:[redacted]@h.example/mcp?k=[redacted]#frag", UpstreamURL{"https", "u:[redacted]@h.example", "h.example", "/mcp?k=[redacted]"}, true},
		{"IPv6, no path", "http://[::1]:8080", UpstreamURL{"http", "[::1]:8080", "[::1]:8080", ""}, true},
		{"query only", "http://h?x=1", UpstreamURL{"http", "h", "h", "?x=1"}, true},
		{"no host", "http:///mcp", UpstreamURL{"http", "", "", "/mcp"}, true},
		{"a command line", "npx -y server", UpstreamURL{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseUpstream(tt.upstream)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseUpstream(%q) = %+v, %v; want %+v, %v", tt.upstream, got, ok, tt.want, tt.ok)
			}
		})
	}
}
