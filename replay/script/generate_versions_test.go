package script

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/store"
)

// FromTape's server.protocolVersions are the versions the recording shows
// the server speaking, over all its sessions; without a handshake, any of
// the handshake era for requests of that era; else the script's default.
func TestFromTape_ProtocolVersions(t *testing.T) {
	initialize := func(id int, asked, answered string) []string {
		return []string{
			`> {"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"initialize","params":{"protocolVersion":"` + asked + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":` + itoa(id) + `,"result":{"protocolVersion":"` + answered + `","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1.0.0"}}}`,
		}
	}
	const discoverReq = `> {"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	call := []string{
		`> {"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	}
	session := func(id string, info store.Handshake, frames ...string) store.TapeSession {
		return tapeOf(store.SessionInfo{ID: id, Handshake: info}, frames...).Sessions[0]
	}
	tests := []struct {
		name     string
		sessions []store.TapeSession
		want     []string // nil: no protocolVersions (all five)
		comment  string
	}{
		{
			name:     "initialize",
			sessions: []store.TapeSession{session("s1", store.Handshake{}, slices.Concat(initialize(1, "2025-11-25", "2025-11-25"), call)...)},
			want:     []string{"2025-11-25"},
		},
		{
			name: "sessions of two versions",
			sessions: []store.TapeSession{
				session("s1", store.Handshake{}, initialize(1, "2025-11-25", "2025-11-25")...),
				session("s2", store.Handshake{}, initialize(1, "2025-03-26", "2025-03-26")...),
			},
			want: []string{"2025-03-26", "2025-11-25"},
		},
		{
			name: "server/discover refused, then initialize",
			sessions: []store.TapeSession{session("s1", store.Handshake{}, slices.Concat([]string{
				discoverReq,
				`< {"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}`,
			}, initialize(1, "2025-11-25", "2025-06-18"))...)},
			want: []string{"2025-06-18"},
		},
		{
			name: "server/discover answered",
			sessions: []store.TapeSession{session("s1", store.Handshake{},
				discoverReq,
				`< {"jsonrpc":"2.0","id":0,"result":{"supportedVersions":["2026-07-28","2025-11-25","1999-01-01"],"capabilities":{}}}`,
			)},
			want: []string{"2025-11-25", "2026-07-28"},
		},
		{
			name: "a version unsupported, with those supported",
			sessions: []store.TapeSession{session("s1", store.Handshake{},
				discoverReq,
				`< {"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}`,
			)},
			want: []string{"2025-06-18"},
		},
		{
			name: "a 2026-07-28 request answered, no discover",
			sessions: []store.TapeSession{session("s1", store.Handshake{},
				`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
			)},
			want: []string{"2026-07-28"},
		},
		{
			name:     "handshake cut from the frames, kept in the info",
			sessions: []store.TapeSession{session("s1", store.Handshake{Method: "initialize", ProtocolVersion: "2025-06-18", ServerInfo: json.RawMessage(`{"name":"s","version":"1"}`)}, call...)},
			want:     []string{"2025-06-18"},
		},
		{
			name:     "only the version asked for in the info",
			sessions: []store.TapeSession{session("s1", store.Handshake{Method: "initialize", ProtocolVersion: "2025-06-18"}, call...)},
			want:     handshakeVersions,
			comment:  "No handshake was recorded, and the requests were of the handshake era",
		},
		{
			name:     "an unknown version answered",
			sessions: []store.TapeSession{session("s1", store.Handshake{}, slices.Concat(initialize(1, "2099-01-01", "2099-01-01"), call)...)},
			want:     handshakeVersions,
			comment:  "No handshake was recorded, and the requests were of the handshake era",
		},
		{
			name:     "no handshake, requests of the handshake era",
			sessions: []store.TapeSession{session("s1", store.Handshake{}, call...)},
			want:     handshakeVersions,
			comment:  "No handshake was recorded, and the requests were of the handshake era",
		},
		{
			name: "no handshake, a result of 2026-07-28 to a request of the handshake era",
			sessions: []store.TapeSession{session("s1", store.Handshake{},
				`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
				`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`,
			)},
			want:    knownVersions,
			comment: "No handshake was recorded, and the requests were of the handshake era",
		},
		{
			name: "no handshake, a 2026-07-28 request refused",
			sessions: []store.TapeSession{session("s1", store.Handshake{},
				`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				`< {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"down"}}`,
			)},
			want: nil,
		},
		{
			name:     "nothing recorded",
			sessions: []store.TapeSession{session("s1", store.Handshake{})},
			want:     nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := FromTape(&store.Tape{Sessions: tt.sessions})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse("generated.yaml", out)
			if err != nil {
				t.Fatalf("the script does not load: %v\n%s", err, out)
			}
			var doc struct {
				Server struct {
					ProtocolVersions []string `yaml:"protocolVersions"`
				} `yaml:"server"`
			}
			if err := yaml.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			want := slices.Sorted(slices.Values(tt.want))
			if got := doc.Server.ProtocolVersions; !slices.Equal(got, want) {
				t.Errorf("protocolVersions %q, want %q\n%s", got, want, out)
			}
			speaks := slices.Sorted(slices.Values(s.versions))
			if tt.want == nil {
				want = slices.Sorted(slices.Values(knownVersions))
			}
			if !slices.Equal(speaks, want) {
				t.Errorf("the script speaks %q, want %q", speaks, want)
			}
			if tt.comment != "" && !strings.Contains(string(out), "# "+tt.comment) {
				t.Errorf("the script lacks the comment %q:\n%s", tt.comment, out)
			}
		})
	}
}
