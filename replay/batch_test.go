package replay_test

import (
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// batchTape is a 2025-03-26 session whose client sent a batch, answered
// as one array with the answers out of the batch's order (JSON-RPC 2.0
// allows any order).
var batchTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> [{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}},` +
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]`,
	`< [{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"B"}]}},` +
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"A"}]}}]`,
}

// TestReplay_RecordedBatch: the requests of a recorded batch are matched
// one by one, so a live batch in another order, or the same requests sent
// alone, get the recorded answers.
func TestReplay_RecordedBatch(t *testing.T) {
	call := func(id, text string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
	}
	answer := func(id, text string) string {
		return `{"id":` + id + `,"jsonrpc":"2.0","result":{"content":[{"text":"` + text + `","type":"text"}]}}`
	}
	tests := []struct {
		name string
		send []string
		want []string
	}{
		{"a batch in another order", []string{`[` + call(`"x"`, "b") + `,` + call(`"y"`, "a") + `]`},
			[]string{`[` + answer(`"x"`, "B") + `,` + answer(`"y"`, "A") + `]`}},
		{"the requests alone", []string{call("7", "a"), call("8", "b")},
			[]string{answer("7", "A"), answer("8", "B")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mocktest.New(t, []replay.Source{cassetteOf(t, batchTape...)})
			c := dial(t, srv)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`)
			c.recv()
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for i, line := range tt.send {
				if got := c.roundTrip(line); got != tt.want[i] {
					t.Errorf("sent %s\ngot  %s\nwant %s", line, got, tt.want[i])
				}
			}
			if err := srv.Check(); err != nil {
				t.Error(err)
			}
		})
	}
}
