package rerun_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
)

// Rerun a recorded tools/list against a server (here a shell script that
// now lists one more tool) and print what changed.
func ExampleRun() {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	recorded := &store.TapeSession{Info: store.SessionInfo{ID: "s1"}, Messages: []*store.Message{
		{Seq: 1, Dir: store.C2S, Time: t0, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
		{Seq: 2, Dir: store.S2C, Time: t0, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}]}}`)},
	}}
	server := []string{"sh", "-c", `read -r line; echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"},{"name":"sum"}]}}'; cat >/dev/null`}

	res, err := rerun.Run(context.Background(), recorded, rerun.Options{Command: server})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range replay.CompareSessions(recorded, &res.Session) {
		fmt.Println(d)
	}
	// Output:
	// ~ tools/list  (a#1 b#1)
	//     + result.tools[1].name="sum"
}
