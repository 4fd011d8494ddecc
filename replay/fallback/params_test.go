package fallback_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// whereSchema marks the input region x-mcp-header: a 2026-07-28 client
// sends it as Mcp-Param-Region too, and go-sdk's stateless handler
// refuses a tools/call without it (400, -32020).
const whereSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`

// listedCassette has a 2026-07-28 session that listed the tool where and
// never called it.
const listedCassette = `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"where","version":"1.0.0"}},"ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}
{"session":"s1","seq":4,"dir":"s2c","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"where","inputSchema":` + whereSchema + `}],"resultType":"complete"}}}
`

// TestFallback_StatelessParamHeaders: a 2026-07-28 tools/call the
// fallback passes on over HTTP carries the Mcp-Param-* headers its tool's
// schema asks for, as the client's own did, so that a real server that
// checks them (go-sdk's stateless handler) answers it. The fallback knows
// the schema from the server's tools/list it passed on (a cassette
// recorded from scratch) or, when the recording answered tools/list, from
// the recording.
func TestFallback_StatelessParamHeaders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sources func(t *testing.T) []replay.Source
		asked   string // the requests that reach the server, by Mcp-Method, server/discover aside
	}{
		{"schema from the server's tools/list", func(*testing.T) []replay.Source { return nil }, "tools/list tools/call "},
		{"schema from the recording's tools/list", func(t *testing.T) []replay.Source {
			return []replay.Source{mocktest.LoadCassette(t, cassetteDB(t, "listed.db", listedCassette))}
		}, "tools/call "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu      sync.Mutex
				methods string
				regions []string
			)
			srv := mcp.NewServer(&mcp.Implementation{Name: "where", Version: "1.0.0"}, nil)
			srv.AddTool(&mcp.Tool{Name: "where", InputSchema: json.RawMessage(whereSchema)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{ Region string }
				_ = json.Unmarshal(req.Params.Arguments, &in)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "in " + in.Region}}}, nil
			})
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
			real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if m := r.Header.Get("Mcp-Method"); m != "server/discover" {
					methods += m + " "
				}
				if r.Header.Get("Mcp-Method") == "tools/call" {
					regions = append(regions, r.Header.Get("Mcp-Param-Region"))
				}
				mu.Unlock()
				h.ServeHTTP(w, r)
			}))
			defer real.Close()
			u, _ := url.Parse(real.URL)
			fb := newFallback(t, fallback.Options{URL: u, Record: filepath.Join(t.TempDir(), "new.db")})
			rs, err := replay.NewServer(append(tc.sources(t), fb), replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			endpoint, stop := serveReplay(rs)
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, closeClient := statelessClient(ctx, t, endpoint)
			defer closeClient()
			// The client lists first: it sends Mcp-Param-Region only for
			// tools it has seen listed, and mcpmock checks that it does.
			if _, err := c.cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "where", Arguments: map[string]any{"region": "north"}})
			if err != nil {
				t.Fatalf("tools/call where: %v", err)
			}
			closeClient()
			stop()
			if len(res.Content) != 1 || res.IsError {
				t.Fatalf("tools/call where: %+v", res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "in north" {
				t.Errorf("tools/call where: %q, want the server's %q", got, "in north")
			}
			mu.Lock()
			defer mu.Unlock()
			if methods != tc.asked {
				t.Errorf("the server was asked: %q, want %q", methods, tc.asked)
			}
			if len(regions) != 1 || regions[0] != "north" {
				t.Errorf("Mcp-Param-Region of the calls that reached the server: %q, want [north]", regions)
			}
			if st := fb.Stats(); len(st.Failed) != 0 {
				t.Errorf("the fallback failed: %v", st.Failed)
			}
		})
	}
}
