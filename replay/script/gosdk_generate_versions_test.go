package script_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// TestGoSDK_FromTapeVersions: a script made from a recording speaks the
// protocol versions the recorded server spoke. go-sdk's client asks
// server/discover (2026-07-28) first: against the script of a
// handshake-era server it falls back to initialize and gets the version
// the server answered, as against the server itself.
func TestGoSDK_FromTapeVersions(t *testing.T) {
	onStdio, onHTTP := transportCase{"stdio", "", false}, transportCase{"http", "", true}
	for _, cassette := range []string{"everything-stdio.db", "everything-http.db"} {
		tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", cassette))
		if err != nil {
			t.Fatal(err)
		}
		recorded := tape.Sessions[0].Info.Handshake.ProtocolVersion
		if recorded != "2025-11-25" {
			t.Fatalf("%s: recorded version %q, want server-everything's 2025-11-25", cassette, recorded)
		}
		path, _ := scriptFile(t, "everything.yaml", tape)
		for _, tc := range []transportCase{onStdio, onHTTP} {
			t.Run(cassette+"/"+tc.name, func(t *testing.T) {
				if got := connect(t, tc, path, nil).InitializeResult().ProtocolVersion; got != recorded {
					t.Errorf("go-sdk's client negotiated %s with the script, want %s as with the recorded server", got, recorded)
				}
			})
		}
	}

	// A go-sdk server that speaks 2025-06-18 and 2025-03-26 alone,
	// recorded with a client of each: the script speaks both, and
	// answers each client as the server did.
	s := mcp.NewServer(&mcp.Implementation{Name: "older", Version: "1.0.0"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-06-18", "2025-03-26"}})
	s.AddTool(&mcp.Tool{Name: "noop", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	live := map[string]string{}
	tape := recordGoSDKSessions(t, s, func(ctx context.Context, version string, cs *mcp.ClientSession) {
		live[version] = cs.InitializeResult().ProtocolVersion
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "noop"}); err != nil {
			t.Fatal(err)
		}
	}, "", "2025-03-26")
	if want := map[string]string{"": "2025-06-18", "2025-03-26": "2025-03-26"}; live[""] != want[""] || live["2025-03-26"] != want["2025-03-26"] {
		t.Fatalf("go-sdk's server negotiated %v, want %v", live, want)
	}
	path, out := scriptFile(t, "older.yaml", tape)
	for _, version := range []string{"", "2025-03-26"} {
		for _, tc := range []transportCase{onStdio, onHTTP} {
			tc.version = version
			if got := connect(t, tc, path, nil).InitializeResult().ProtocolVersion; got != live[version] {
				t.Errorf("%s, asking %q: go-sdk's client negotiated %s with the script, want %s as with the recorded server\n%s", tc.name, version, got, live[version], out)
			}
		}
	}
}

// recordGoSDKSessions records go-sdk's client using s over Streamable
// HTTP, once per version (ClientSessionOptions.ProtocolVersion, "" for
// go-sdk's newest), each client after the last; use is what each client
// does once connected.
func recordGoSDKSessions(t *testing.T, s *mcp.Server, use func(ctx context.Context, version string, cs *mcp.ClientSession), versions ...string) *store.Tape {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer up.Close()
	db := filepath.Join(t.TempDir(), "recorded.db")
	w, err := store.NewWriter(db, store.WriterOptions{Observe: store.ObserveHandshake, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proxy, stop := httpProxying(t, ctx, w, up.URL)
	for _, v := range versions {
		c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxy}, &mcp.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		use(ctx, v, cs)
		cs.Close()
	}
	return finishRecording(t, stop, w, db)
}
