package script_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDK_RefusedRequestsDoNotCount: go-sdk first sends server/discover,
// which a handshake-era script refuses, then initialize. Over stdio the
// probe is on the session's connection, over HTTP in no session; either
// way it is no request of the session, so .request and events' after
// count the same on both.
func TestGoSDK_RefusedRequestsDoNotCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reqcount.yaml")
	script := `server: {name: rc, version: "1", protocolVersions: [2025-11-25]}
tools:
  - {name: t, answers: [{text: "request {{.request}}, call {{.call}}"}]}
events:
  - after: {requests: 2}
    addTools: [{name: late, answers: [{text: late}]}]
`
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []transportCase{transports[1], transports[3]} { // go-sdk's newest: probes server/discover
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, path, nil)
			ctx := ctxT(t)
			if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Fatalf("negotiated %s, want the fallback to 2025-11-25", v)
			}
			lt, err := cs.ListTools(ctx, nil) // request 2: the event fires after it
			if err != nil {
				t.Fatal(err)
			}
			if len(lt.Tools) != 1 {
				t.Errorf("tools before the event: %d, want 1", len(lt.Tools))
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "request 3, call 1" {
				t.Errorf("got %q, want %q", got, "request 3, call 1")
			}
			lt, err = cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range lt.Tools {
				names = append(names, tl.Name)
			}
			if got := strings.Join(names, ","); got != "t,late" {
				t.Errorf("tools after the event: %s, want t,late", got)
			}
		})
	}
}
