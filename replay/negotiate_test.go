package replay_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that asks for an earlier protocol version than the recording
// answered gets the version it asked for, as the recorded server (which
// supports the earlier versions) would have answered it; one that asks for
// a later or an unknown version gets the recorded one.
func TestReplay_NegotiatesAnEarlierVersion(t *testing.T) {
	tests := []struct{ asked, want string }{
		{"2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26"},
		{"2024-11-05", "2024-11-05"},
		{"2025-11-25", "2025-11-25"},
		{"2099-01-01", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.asked, func(t *testing.T) {
			cassette := mocktest.LoadCassette(t, peertest.CopyShipped(t, "everything-stdio.db")) // answered 2025-11-25
			srv := mocktest.New(t, []replay.Source{cassette})
			c := dial(t, srv)
			got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tt.asked + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			var answer struct {
				Result struct {
					ProtocolVersion string
					ServerInfo      struct{ Name string }
				}
			}
			if err := json.Unmarshal([]byte(got), &answer); err != nil || answer.Result.ProtocolVersion != tt.want || answer.Result.ServerInfo.Name != "mcp-servers/everything" {
				t.Errorf("asked for %s, answered %+v; want the recorded answer with %s", tt.asked, answer.Result, tt.want)
			}
		})
	}
}

// A cassette without its initialize exchange answers from its session
// info, negotiated alike.
func TestReplay_NegotiatesWithoutARecordedInitialize(t *testing.T) {
	tape, err := store.Load(peertest.CopyShipped(t, "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s := &tape.Sessions[0]
	s.Messages = slices.DeleteFunc(s.Messages, func(m *store.Message) bool { return m.Seq <= 2 }) // initialize and its answer
	cassette, err := replay.NewCassette("trimmed.jsonl", tape)
	if err != nil {
		t.Fatal(err)
	}
	srv := mocktest.New(t, []replay.Source{cassette})
	got := dial(t, srv).roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("answered %s, want 2025-06-18", got)
	}
	if w := srv.Warnings(); !strings.Contains(w, "recorded no initialize exchange") || !strings.Contains(w, "the client's earlier version in place of the recorded one") {
		t.Errorf("warnings:\n%s", w)
	}
}

// go-sdk's client told to speak 2025-06-18 replays a recording of the
// TypeScript SDK's 2025-11-25 session: the handshake agrees on 2025-06-18
// and the recorded calls are answered.
func TestReplay_GoSDKOlderVersion(t *testing.T) {
	cassette := mocktest.LoadCassette(t, peertest.CopyShipped(t, "everything-stdio.db"))
	srv := mocktest.New(t, []replay.Source{cassette})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, nil).
		Connect(ctx, srv.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-06-18" {
		t.Errorf("agreed on %s, want 2025-06-18", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from mcptape"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "Echo: hello from mcptape" {
		t.Errorf("echo answered %+v", res.Content[0])
	}
	if w := srv.Warnings(); strings.Contains(w, "protocol version") {
		t.Errorf("warned about the version it negotiated:\n%s", w)
	}
}
