package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// slowTool is a source whose tools/call takes an hour, waited through
// replay.Sleep; it answers anything else at once.
type slowTool struct{}

func (slowTool) Name() string               { return "slow" }
func (slowTool) Open() replay.SessionSource { return slowTool{} }
func (slowTool) Unused() []string           { return nil }
func (slowTool) Answer(context.Context, replay.Peer, *replay.Request) (replay.Reply, bool) {
	return replay.Reply{}, false
}

func (slowTool) Prepare(req *replay.Request) (*replay.Prepared, bool) {
	if req.Method != "tools/call" {
		return &replay.Prepared{Reply: replay.Reply{Result: json.RawMessage(`{}`)}}, true
	}
	return &replay.Prepared{Play: func(ctx context.Context, _ replay.Peer, _ *replay.Request) replay.Reply {
		if !replay.Sleep(ctx, time.Hour) {
			return replay.Reply{NoReply: true} // given up: nobody reads it
		}
		return replay.Reply{Result: json.RawMessage(`{"content":[]}`)}
	}}, true
}

// A Play that waits through Sleep is given up when the client closes
// stdin (here, at the end of the requests), and the report lists the
// call as interrupted rather than matched.
func ExampleSleep() {
	srv, err := replay.NewServer([]replay.Source{slowTool{}}, replay.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}` + "\n"
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), os.Stdout); err != nil {
		fmt.Println(err)
		return
	}
	r := srv.Report()
	fmt.Printf("matched %d, interrupted %+v\n", r.Matched, r.Interrupted)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// matched 1, interrupted [{Method:tools/call Params:{"name":"slow"} Why:the client closed stdin while it waited}]
}
