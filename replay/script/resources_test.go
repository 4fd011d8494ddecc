package script

import "testing"

// TestSession_ResourceNotFound: reading a URI the script does not have is
// -32002 up to 2025-11-25, and -32602 in 2026-07-28, whose schema retires
// -32002 for it; both carry the URI as data.
func TestSession_ResourceNotFound(t *testing.T) {
	s := mustLoad(t, "script-events.yaml")
	stateless := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	tests := []struct {
		name   string
		params map[string]any
		code   int
	}{
		{"handshake era", map[string]any{"uri": "file:///nowhere.txt"}, -32002},
		{"2026-07-28", map[string]any{"uri": "file:///nowhere.txt", "_meta": stateless}, -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := newClient(t, s).ask("resources/read", tt.params)
			if !ok || r.Error == nil {
				t.Fatalf("want an error, got %+v (answered %v)", r, ok)
			}
			if r.Error.Code != tt.code || string(r.Error.Data) != `{"uri":"file:///nowhere.txt"}` {
				t.Errorf("error %d %q data %s, want %d with the uri", r.Error.Code, r.Error.Message, r.Error.Data, tt.code)
			}
		})
	}
}
