package replay_test

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// statelessMeta is the _meta of a 2026-07-28 request.
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// subscribedTape is a 2026-07-28 session as go-sdk's server answers it:
// resultType, ttlMs and cacheScope in its results, serverInfo in their
// _meta, the listen's subscriptionId on what its stream carried.
var subscribedTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + statelessMeta + `,"notifications":{"toolsListChanged":true}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + statelessMeta + `}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"ttlMs":0,"cacheScope":"public","tools":[{"name":"grow","inputSchema":{"type":"object"}}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + statelessMeta + `,"name":"grow","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"trace":"t1"},"content":[{"type":"text","text":"grew"}],"resultType":"complete"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{` + statelessMeta + `,"name":"log","arguments":{}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"level":"info","data":"x"}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[],"resultType":"complete"}}`,
}

// A 2026-07-28 recording replayed to a handshake-era client is sent as a
// server that negotiated the client's version answers: without
// resultType, ttlMs, cacheScope, the serverInfo in result _meta and the
// listen's subscriptionId (an emptied _meta or params left out), every
// other byte as recorded. To a client of the recorded era, everything
// goes as recorded, byte for byte; and so does a handshake-era recording
// to a handshake-era client, members of those names included.
func TestReplay_StatelessRecordingToHandshakeClient(t *testing.T) {
	const hello = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`
	tests := []struct {
		name  string
		tape  []string
		hello bool     // initialize first: a handshake-era client
		meta  string   // what the live requests carry besides name and arguments
		sends []string // tools/call names, each answered, then what followed
		want  []string // raw lines, as sent
	}{
		{
			name:  "handshake-era client",
			tape:  subscribedTape,
			hello: true,
			sends: []string{"grow", "log"},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"trace":"t1"},"content":[{"type":"text","text":"grew"}]}}`,
				`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
			},
		},
		{
			name:  "2026-07-28 client",
			tape:  subscribedTape,
			meta:  statelessMeta + ",",
			sends: []string{"grow", "log"},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"trace":"t1"},"content":[{"type":"text","text":"grew"}],"resultType":"complete"}}`,
				`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"level":"info","data":"x"}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"content":[],"resultType":"complete"}}`,
			},
		},
		{
			name: "handshake-era recording, handshake-era client",
			tape: []string{
				`> ` + hello,
				`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
				`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grow","arguments":{}}}`,
				`< {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"content":[],"resultType":"x","ttlMs":5}}`,
				`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
			},
			hello: true,
			sends: []string{"grow"},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"content":[],"resultType":"x","ttlMs":5}}`,
				`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tt.tape...)})
			c := dial(t, s)
			if tt.hello {
				if got := c.roundTrip(hello); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
					t.Fatalf("initialize: %s", got)
				}
				c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			var got []string
			for i, name := range tt.sends {
				c.send(`{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"tools/call","params":{` + tt.meta + `"name":"` + name + `","arguments":{}}}`)
				for {
					l := c.recv()
					got = append(got, l)
					if strings.Contains(l, `"result"`) || strings.Contains(l, `"error"`) {
						break
					}
				}
			}
			// What followed the last answer.
			for len(got) < len(tt.want) {
				got = append(got, c.recv())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
