package recorder

import (
	"strings"
	"testing"
)

// The command wrap suggests for a URL server carries the entry's headers
// in the entry's order, each one shell word, and the note says it holds
// them; headers that are no object of strings are named instead.
func TestWrapHostConfig_URLServerHeaders(t *testing.T) {
	for _, tt := range []struct {
		name, headers string
		want          []string
		not           string
	}{
		{"in order, quoted", `{"X-Team": "blue", "Authorization": "Bearer it's"}`,
			[]string{`--session remote --header 'X-Team: blue' --header 'Authorization: Bearer it'\''s' --upstream https://example.com/mcp`,
				"holds the entry's headers, credentials included"}, "${"},
		{"a host's variable", `{"Authorization": "Bearer ${input:token}"}`,
			[]string{`--header 'Authorization: Bearer ${input:token}'`, "a ${…} in them is the host's to fill in"}, ""},
		{"not an object", `["Authorization: Bearer x"]`,
			[]string{`--session remote --upstream https://example.com/mcp`, "(its headers are not an object: add what the server needs as --header 'NAME: VALUE')"}, "--header 'A"},
		{"not a string", `{"X-Retries": 3}`,
			[]string{`(its header "X-Retries" is not a string: add what`}, "holds the entry's headers"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := []byte(`{"mcpServers": {"remote": {"type": "http", "url": "https://example.com/mcp", "headers": ` + tt.headers + `}}}`)
			_, notes, err := WrapHostConfig(config, WrapOptions{Mcpspy: "mcpspy", Cassette: "/c.db"})
			if err != nil || len(notes) != 1 {
				t.Fatalf("notes %+v, err %v", notes, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(notes[0].Note, w) {
					t.Errorf("note %q\nlacks %q", notes[0].Note, w)
				}
			}
			if tt.not != "" && strings.Contains(notes[0].Note, tt.not) {
				t.Errorf("note %q\nholds %q", notes[0].Note, tt.not)
			}
		})
	}
}
