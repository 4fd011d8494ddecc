package replay_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
)

// anyMethodSource stands for package fallback's source: it may answer
// any method, and holds nothing.
type anyMethodSource struct{}

func (anyMethodSource) Name() string               { return "fallback" }
func (anyMethodSource) Open() replay.SessionSource { return nil }
func (anyMethodSource) Unused() []string           { return nil }
func (anyMethodSource) AnswersAnyMethod() bool     { return true }

// --match ignore-params=METHOD,... naming a method no cassette recorded
// would change nothing: most often a typo. NewServer refuses it, naming
// the method and the recorded one nearest; with a source that answers
// any method (a real server behind mcpmock) it only warns, as that
// server may answer it.
func TestNewServer_IgnoreParamsUnrecordedMethod(t *testing.T) {
	recorded := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	tests := []struct {
		name    string
		mode    string
		sources func(t *testing.T) []replay.Source
		wantErr string // "" : none
		warning string // "" : none
	}{
		{
			name: "recorded methods", mode: "ignore-params=tools/list,tools/call",
			sources: func(t *testing.T) []replay.Source { return []replay.Source{cassetteOf(t, recorded...)} },
		},
		{
			name: "every method", mode: "ignore-params",
			sources: func(t *testing.T) []replay.Source { return []replay.Source{cassetteOf(t)} },
		},
		{
			name: "a typo", mode: "ignore-params=tools/lst",
			sources: func(t *testing.T) []replay.Source { return []replay.Source{cassetteOf(t, recorded...)} },
			wantErr: `match mode "ignore-params=tools/lst": no cassette recorded a request of method tools/lst (did you mean tools/list?); recorded: tools/call, tools/list`,
		},
		{
			name: "two, one near nothing", mode: "ignore-params=tools/call,prompts/gett,tools/lisst",
			sources: func(t *testing.T) []replay.Source { return []replay.Source{cassetteOf(t, recorded...)} },
			wantErr: `no cassette recorded a request of method prompts/gett or tools/lisst (did you mean tools/list?); recorded: tools/call, tools/list`,
		},
		{
			name: "a notification, never matched by params", mode: "ignore-params=notifications/initialized",
			sources: func(t *testing.T) []replay.Source { return []replay.Source{cassetteOf(t, recorded...)} },
			wantErr: "no cassette recorded a request of method notifications/initialized",
		},
		{
			name: "in the second cassette", mode: "ignore-params=resources/read",
			sources: func(t *testing.T) []replay.Source {
				return []replay.Source{cassetteOf(t, recorded...), cassetteOf(t,
					`> {"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`,
					`< {"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`)}
			},
		},
		{
			name: "no cassette", mode: "ignore-params=tools/call",
			sources: func(t *testing.T) []replay.Source { return []replay.Source{cassetteOf(t)} },
			wantErr: "no cassette recorded a request of method tools/call: --match applies to cassettes, and none recorded a request",
		},
		{
			name: "a real server behind", mode: "ignore-params=tools/lst",
			sources: func(t *testing.T) []replay.Source {
				return []replay.Source{cassetteOf(t, recorded...), anyMethodSource{}}
			},
			warning: "mcpmock: --match ignore-params=tools/lst: no cassette recorded a request of method tools/lst (did you mean tools/list?) yet; the fallback server answers it until one does\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			srv, err := replay.NewServer(tt.sources(t), replay.Options{Match: tt.mode, Log: &log})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("NewServer: %v", err)
				}
				srv.Close()
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewServer: %v, want an error with %q", err, tt.wantErr)
			}
			if got := log.String(); got != tt.warning {
				t.Errorf("warned %q, want %q", got, tt.warning)
			}
		})
	}
}
