package replay_test

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// A recorded request that the client cancelled, and that the server
// answered anyway (an error saying so), is replayed as unanswered: the
// answer was caused by the cancellation, and a live client that has not
// cancelled must not get it. It waits as a hung call does; the session
// goes on.
func TestServer_CancelledAnswerNotReplayed(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`< {"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}`,
	)})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow"}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); !strings.Contains(got, `"id":"p"`) {
		t.Errorf("after the call: got %s, want the ping's answer (the recorded cancellation's answer is not replayed)", got)
	}
}
