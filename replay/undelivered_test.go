package replay_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// What a recording's server sent outside any request (list_changed after
// a call) travels on the session's GET stream over Streamable HTTP. A
// client that opens none never gets it: the report says so, rather than
// nothing.
func TestHTTP_UndeliveredWithoutGETStream(t *testing.T) {
	tape := []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"2"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add-tool","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	}
	tests := []struct {
		name    string
		noGET   bool
		want    []replay.Undelivered
		warning bool
	}{
		{"GET stream open: delivered", false, nil, false},
		{"no GET stream: counted and said", true, []replay.Undelivered{{Method: "notifications/tools/list_changed", Count: 1}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)})
			changed := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			ctx := context.Background()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), DisableStandaloneSSE: tt.noGET}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add-tool"}); err != nil {
				t.Fatal(err)
			}
			if !tt.noGET {
				waitFor(t, changed, "list_changed on the GET stream")
			}
			if err := cs.Close(); err != nil { // DELETE: the session ends
				t.Fatal(err)
			}
			// The list_changed goes out after the answer, so it may
			// reach the session's log after the DELETE: poll.
			var got []replay.Undelivered
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				got = s.Report().Undelivered
				if len(got) > 0 || !tt.noGET || time.Now().After(deadline) {
					break
				}
			}
			s.Close()
			got = s.Report().Undelivered
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("undelivered %+v, want %+v", got, tt.want)
			}
			if warned := strings.Contains(s.Warnings(), "never reached the client (notifications/tools/list_changed)"); warned != tt.warning {
				t.Errorf("warned %v, want %v:\n%s", warned, tt.warning, s.Warnings())
			}
			select {
			case <-changed:
				if tt.noGET {
					t.Error("list_changed reached a client with no GET stream")
				}
			default:
			}
		})
	}
}
