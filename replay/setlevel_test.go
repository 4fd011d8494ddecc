package replay_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// A client may set the log level whatever it goes on to do (the MCP
// Inspector's CLI does, right after connecting, and gives up on an
// error). A recording made with another client has no setLevel to match:
// mcpmock answers one as a server that declared logging would, and as
// one that did not.
func TestServer_UnrecordedSetLevel(t *testing.T) {
	handshake := func(caps string) []string {
		return []string{
			`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"srv","version":"2"}}}`,
			`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		}
	}
	setLevel := func(id, level string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"logging/setLevel","params":{"level":"` + level + `"}}`
	}
	const warning = "nothing recorded answers logging/setLevel"
	tests := []struct {
		name          string
		tape          []string
		levels        []string // set in turn
		want          []string // the answers
		wantUnmatched int
		wantWarnings  int
	}{
		{
			name:   "declared logging: an empty result, one warning",
			tape:   handshake(`{"logging":{},"tools":{}}`),
			levels: []string{"debug", "error"},
			want: []string{
				`{"id":"1","jsonrpc":"2.0","result":{}}`,
				`{"id":"2","jsonrpc":"2.0","result":{}}`,
			},
			wantWarnings: 1,
		},
		{
			name:   "declared logging, a level the spec does not name",
			tape:   handshake(`{"logging":{}}`),
			levels: []string{"verbose"},
			want: []string{
				`{"error":{"code":-32602,"message":"logging/setLevel: level must be one of debug, info, notice, warning, error, critical, alert, emergency"},"id":"1","jsonrpc":"2.0"}`,
			},
		},
		{
			name:   "no logging declared: method not found, unmatched",
			tape:   handshake(`{"tools":{}}`),
			levels: []string{"debug"},
			want: []string{
				`{"error":{"code":-32601,"message":"Method not found: logging/setLevel (mcpmock: nothing recorded or scripted answers it)"},"id":"1","jsonrpc":"2.0"}`,
			},
			wantUnmatched: 1,
		},
		{
			name: "a recorded setLevel is replayed, with the log message it brought",
			tape: append(handshake(`{"logging":{}}`),
				`> {"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`,
				`< {"jsonrpc":"2.0","id":1,"result":{}}`,
				`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"level set"}}`,
			),
			levels: []string{"debug"},
			want: []string{
				`{"id":"1","jsonrpc":"2.0","result":{}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"level set","level":"debug"}}`,
			},
		},
		{
			name: "no recorded handshake: logging inferred from a log message on tape",
			tape: []string{
				`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			},
			levels:       []string{"info"},
			want:         []string{`{"id":"1","jsonrpc":"2.0","result":{}}`},
			wantWarnings: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tt.tape...)})
			c := dial(t, s)
			c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`)
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			var got []string
			for i, level := range tt.levels {
				c.send(setLevel(string(rune('1'+i)), level))
			}
			for range tt.want {
				got = append(got, norm(t, c.recv()))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			s.Close()
			if n := len(s.Report().Unmatched); n != tt.wantUnmatched {
				t.Errorf("%d unmatched, want %d: %+v", n, tt.wantUnmatched, s.Report().Unmatched)
			}
			if n := strings.Count(s.Warnings(), warning); n != tt.wantWarnings {
				t.Errorf("warned %d times, want %d:\n%s", n, tt.wantWarnings, s.Warnings())
			}
		})
	}
}

// The go-sdk client sets a level on the shipped cassette, recorded from
// server-everything (which declares logging) by a client that set none.
func TestServer_UnrecordedSetLevelGoSDK(t *testing.T) {
	s := mocktest.NewFromCassette(t, filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db"))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, s.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// Logging is deprecated from 2026-07-28 (SEP-2577); the cassette's
	// server speaks 2025-11-25, where it is current.
	//lint:ignore SA1019 see above
	if cs.InitializeResult().Capabilities.Logging == nil {
		t.Fatal("the shipped cassette's server declares no logging; this test needs one that does")
	}
	//lint:ignore SA1019 see above
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("SetLoggingLevel: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list after setLevel: %v", err)
	}
	if r := s.Report(); len(r.Unmatched) != 0 {
		t.Errorf("unmatched: %+v", r.Unmatched)
	}
}
