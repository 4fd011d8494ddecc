package replay_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// A cassette that lost its initialize exchange (a filtered export)
// introduces itself from its session info, or from what is on tape.
func TestServer_IntroducesItselfWithoutRecordedHandshake(t *testing.T) {
	cut := []string{ // what is left of a session once the handshake is cut out
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///a"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"messages":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
	}
	inferred := `{"logging":{},"prompts":{},"resources":{"subscribe":true},"tools":{"listChanged":true}}`
	recorded := store.Handshake{
		Method: "initialize", ProtocolVersion: "2025-03-26",
		ServerInfo:   json.RawMessage(`{"name":"srv","version":"2"}`),
		Capabilities: json.RawMessage(`{"tools":{}}`),
		Instructions: "Use <echo> \"carefully\".",
	}
	initialize := func(version string) string {
		return `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	}
	tests := []struct {
		name      string
		handshake store.Handshake
		lines     []string
		ask       string // the client's protocolVersion
		want      string
		wantLog   string // "" for no warning
	}{
		{"session info as recorded", recorded, cut, "2025-11-25",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":{"tools":{}},"instructions":"Use \u003cecho\u003e \"carefully\".","protocolVersion":"2025-03-26","serverInfo":{"name":"srv","version":"2"}}}`,
			"test.db recorded no initialize exchange; answering initialize from its session info: version 2025-03-26 as recorded, serverInfo as recorded, capabilities as recorded, instructions as recorded"},
		{"no info: inferred, the client's version echoed", store.Handshake{}, cut, "2025-06-18",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":` + inferred + `,"protocolVersion":"2025-06-18","serverInfo":{"name":"mcpmock","version":"test.db"}}}`,
			"capabilities inferred from the methods on tape (logging, prompts, resources, tools)"},
		{"no info, a version mcpmock does not know: its latest", store.Handshake{}, cut, "1999-01-01",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":` + inferred + `,"protocolVersion":"2025-11-25","serverInfo":{"name":"mcpmock","version":"test.db"}}}`,
			"serverInfo naming mcpmock"},
		{"a stateless-era recording: its serverInfo, the client's version", store.Handshake{
			Method: "server/discover", ProtocolVersion: "2026-07-28", ServerInfo: json.RawMessage(`{"name":"go","version":"1"}`),
		}, cut, "2025-11-25",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":` + inferred + `,"protocolVersion":"2025-11-25","serverInfo":{"name":"go","version":"1"}}}`,
			"the version the client asks for, serverInfo as recorded"},
		{"a stateless-era recording: its capabilities without extensions", store.Handshake{
			Method: "server/discover", ProtocolVersion: "2026-07-28", ServerInfo: json.RawMessage(`{"name":"go","version":"1"}`),
			Capabilities: json.RawMessage(`{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`),
		}, cut, "2025-11-25",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":{"tools":{}},"protocolVersion":"2025-11-25","serverInfo":{"name":"go","version":"1"}}}`,
			"capabilities as recorded without 2026-07-28's extensions"},
		{"a handshake-era recording: its capabilities as recorded, extensions too", store.Handshake{
			Method: "initialize", ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{"name":"go","version":"1"}`),
			Capabilities: json.RawMessage(`{"tools":{},"extensions":{"com.example/x":{}}}`),
		}, cut, "2025-11-25",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":{"extensions":{"com.example/x":{}},"tools":{}},"protocolVersion":"2025-11-25","serverInfo":{"name":"go","version":"1"}}}`,
			"capabilities as recorded"},
		{"a listen for a resource: subscriptions inferred", store.Handshake{}, []string{
			`> {"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["res://a"]}}}`,
		}, "2025-11-25",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":{"resources":{"subscribe":true}},"protocolVersion":"2025-11-25","serverInfo":{"name":"mcpmock","version":"test.db"}}}`,
			"capabilities inferred from the methods on tape (resources)"},
		{"nothing on tape", store.Handshake{}, nil, "2025-11-25",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":{},"protocolVersion":"2025-11-25","serverInfo":{"name":"mcpmock","version":"test.db"}}}`,
			"capabilities inferred from the methods on tape (none)"},
		{"a recorded initialize is answered as recorded", recorded, basicTape, "2025-06-18",
			`{"id":"i","jsonrpc":"2.0","result":{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":"2025-06-18","serverInfo":{"name":"srv","version":"2"}}}`,
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tape := tapeOf(t, tt.lines...)
			tape.Sessions[0].Info.Handshake = tt.handshake
			c, err := replay.NewCassette("test.db", tape)
			if err != nil {
				t.Fatal(err)
			}
			s := mocktest.New(t, []replay.Source{c})
			if got := dial(t, s).roundTrip(initialize(tt.ask)); got != tt.want {
				t.Errorf("initialize answered\n got  %s\n want %s", got, tt.want)
			}
			// A second client gets the same introduction, and no second warning.
			if got := dial(t, s).roundTrip(initialize(tt.ask)); got != tt.want {
				t.Errorf("second client: initialize answered\n got  %s\n want %s", got, tt.want)
			}
			s.Close()
			logged := s.Warnings()
			switch {
			case tt.wantLog == "" && strings.Contains(logged, "initialize"):
				t.Errorf("warned %q for a recorded handshake", logged)
			case tt.wantLog != "" && (!strings.Contains(logged, tt.wantLog) || strings.Count(logged, "recorded no initialize exchange") != 1):
				t.Errorf("log %q, want one warning containing %q", logged, tt.wantLog)
			}
			if r := s.Report(); len(r.Unmatched) != 0 {
				t.Errorf("unmatched: %+v", r.Unmatched)
			}
		})
	}
}
