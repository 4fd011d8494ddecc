package script_test

import (
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDK_StatelessClientsByClientInfo pins what SCRIPTS.md says of
// 2026-07-28 clients over HTTP: they have no session, and are told apart
// by their clientInfo, so two with the same one share .call and
// sequence, and two with names of their own do not.
func TestGoSDK_StatelessClientsByClientInfo(t *testing.T) {
	tests := []struct {
		name         string
		second       string // the second client's name; the first is "host"
		secondSees   string // the second client's first call of flaky
		firstSeesNow string // the first client's second call
	}{
		{"same clientInfo: one client", "host", "still warming up", "ok"},
		{"names of their own: two clients", "host-2", "backend unavailable (call 1)", "still warming up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, "script-match.yaml")
			hs := httptest.NewServer(srv.Handler())
			t.Cleanup(func() { srv.Close(); hs.Close() })
			ctx := ctxT(t)
			open := func(name string) *mcp.ClientSession {
				c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
					t.Fatalf("negotiated %s", v)
				}
				return cs
			}
			flaky := func(cs *mcp.ClientSession) string {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "flaky"})
				if err != nil {
					return err.Error()
				}
				return text(t, res)
			}
			a, b := open("host"), open(tt.second)
			if got := flaky(a); got != "calling \"tools/call\": backend unavailable (call 1)" {
				t.Errorf("first client, first call: %q", got)
			}
			if got := flaky(b); got != tt.secondSees && got != "calling \"tools/call\": "+tt.secondSees {
				t.Errorf("second client, first call: %q, want %q", got, tt.secondSees)
			}
			if got := flaky(a); got != tt.firstSeesNow {
				t.Errorf("first client, second call: %q, want %q", got, tt.firstSeesNow)
			}
		})
	}
}
