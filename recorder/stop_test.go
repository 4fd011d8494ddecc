package recorder_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/store"
)

// mcpspy stopped (SIGINT) while a go-sdk client is still connected ends
// that client's session as interrupted, over Streamable HTTP and over the
// legacy SSE transport alike, and keeps what passed. Without this, the
// cassette would say the peers closed a session they never closed.
func TestHTTPProxy_StoppedWhileConnected(t *testing.T) {
	tests := []struct {
		name      string
		upstream  func(t *testing.T) string // the URL to proxy
		transport func(proxy string) mcp.Transport
	}{
		{"streamable HTTP",
			func(t *testing.T) string {
				srv := goSDKServer()
				return serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)) + "/mcp"
			},
			func(proxy string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: proxy + "/mcp"} }},
		{"legacy SSE",
			func(t *testing.T) string { return absoluteEndpointServer(t, nil) + "/sse" },
			func(proxy string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: proxy + "/sse"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px := startHTTPProxy(t, tt.upstream(t))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, nil)
			cs, err := client.Connect(ctx, tt.transport(px.URL), nil)
			if err != nil {
				t.Fatalf("connect through the proxy: %v", err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "before the stop"}})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "before the stop" {
				t.Fatalf("echo: %v %v", res, err)
			}
			px.Stop() // the client has not closed its session

			sessions := readCassette(t, px.Cassette)
			var called bool
			for _, s := range sessions {
				if strings.Contains(strings.Join(methods(s.msgs), " "), "tools/call") {
					called = true
				}
				if end := s.info.End; end == nil || end.Reason != store.EndSignal || end.Signal != "mcpspy interrupted" {
					t.Errorf("session %s ended %+v, want signal: mcpspy interrupted", s.info.ID, end)
				}
			}
			if !called {
				t.Errorf("the tools/call is not in the cassette:\n%s", strings.Join(flat(sessions), "\n"))
			}
		})
	}
}
