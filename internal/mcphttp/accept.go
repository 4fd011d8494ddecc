package mcphttp

import (
	"net/http"
	"strings"
)

// Accepts says whether h's Accept header lists mediaType by name (any
// case, parameters aside). Media ranges (*/*, text/*) do not count: a
// Streamable HTTP client must list application/json and
// text/event-stream, and the TypeScript SDK's server refuses a client
// that does not.
func Accepts(h http.Header, mediaType string) bool {
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(name), mediaType) {
				return true
			}
		}
	}
	return false
}
