package replay_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool that takes no arguments is called with "arguments" left out by
// the TypeScript SDK and with "arguments":{} by go-sdk. Either recording
// answers either client.
func TestReplay_NoArgumentsAcrossClients(t *testing.T) {
	t.Parallel()
	mock := peertest.Binary(t, "mcpmock")
	tinyImage := []string{"text", "image", "text"} // server-everything's get-tiny-image
	tsCall := func(t *testing.T, command ...string) []string {
		t.Helper()
		return peertest.NodeTranscript(t, 60*time.Second, nil, "call-client.mjs", append([]string{"get-tiny-image", "--"}, command...)...)
	}

	t.Run("recorded with {}, replayed to the TS SDK", func(t *testing.T) {
		// The shipped cassette's go-sdk-style call: "arguments":{}.
		db := peertest.CopyShipped(t, "everything-stdio.db")
		if got := tsCall(t, mock, "serve", db); !slices.Equal(got, tinyImage) {
			t.Errorf("the TS client got %q, want the recorded image", got)
		}
	})

	t.Run("recorded from the TS SDK, replayed to go-sdk", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "ts.db")
		rec := append([]string{peertest.Binary(t, "mcpspy"), "record", "-o", db, "--"}, peertest.ServerEverything(t, "stdio")...)
		if got := tsCall(t, rec...); !slices.Equal(got, tinyImage) {
			t.Fatalf("live, the TS client got %q", got)
		}
		cassette := mocktest.LoadCassette(t, db)
		srv := mocktest.New(t, []replay.Source{cassette})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-tiny-image", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) != len(tinyImage) {
			t.Errorf("go-sdk got %+v, want the recorded image", res)
		} else if _, ok := res.Content[1].(*mcp.ImageContent); !ok {
			t.Errorf("go-sdk got %T second, want the recorded image", res.Content[1])
		}
		if got := srv.ToolCalls("get-tiny-image"); len(got) != 1 || string(got[0]) != "{}" {
			t.Errorf("go-sdk sent arguments %q, want {} (else this test shows nothing)", got)
		}
	})
}
