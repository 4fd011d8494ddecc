package replay_test

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// TestCassette_UnusedInitialize: a cassette of two sessions (one recorded
// by mcpspy, one the fallback added) replayed in one client session leaves
// the second initialize unused, and that is no miss; a call it never made
// is.
func TestCassette_UnusedInitialize(t *testing.T) {
	one := tapeOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	two := tapeOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	)
	two.Sessions[0].Info.ID = "s2"
	one.Sessions = append(one.Sessions, two.Sessions...)
	c, err := replay.NewCassette("grown.db", one)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Unused(); len(got) != 4 {
		t.Errorf("before any client: unused %q, want all four requests", got)
	}
	s := mocktest.New(t, []replay.Source{c})
	cl := dial(t, s)
	cl.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	cl.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`)
	got := strings.Join(c.Unused(), "\n")
	if want := `grown.db s1#3 tools/call {"name":"a"}`; got != want {
		t.Errorf("unused:\n%s\nwant:\n%s", got, want)
	}
}
