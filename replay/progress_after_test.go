package replay_test

import (
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// Progress a server sent after answering the request it reports on
// (mcp-go's stdio server can: it writes notifications from a goroutine of
// its own) is replayed after the answer, with the live token; to a request
// that carries no token, none is sent.
func TestServer_ProgressAfterAnswer(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t,
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"2"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"rec"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"rec","progress":1,"total":2}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"rec","progress":2,"total":2}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"echoed"}]}}`,
	)})
	c := dial(t, s)
	c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"live"}}}`)
	for _, want := range []string{
		`{"id":"a","jsonrpc":"2.0","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"live","total":2}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2,"progressToken":"live","total":2}}`,
	} {
		if got := norm(t, c.recv()); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	// The same call without a token: its answer, and what comes next is
	// the next call's answer, no progress.
	steps := []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"slow"}}`, `{"id":"b","jsonrpc":"2.0","result":{"content":[]}}`},
		{`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo"}}`, `{"id":"c","jsonrpc":"2.0","result":{"content":[{"text":"echoed","type":"text"}]}}`},
	}
	for _, st := range steps {
		if got := c.roundTrip(st.send); got != st.want {
			t.Errorf("sent %s\n got  %s\n want %s", st.send, got, st.want)
		}
	}
}
