package script_test

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
)

// TestGoSDK_LogLevel: a handshake-era client sets the level for its
// session with logging/setLevel; a 2026-07-28 request carries its own in
// _meta, and one without gets no logs, as the spec asks.
func TestGoSDK_LogLevel(t *testing.T) {
	tests := []struct {
		name     string
		setLevel string // handshake era: logging/setLevel first
		meta     any    // 2026-07-28: _meta["io.modelcontextprotocol/logLevel"]; nil = none
		want     []string
	}{
		{"no level", "", nil, []string{"info", "debug"}},
		{"info", "info", "info", []string{"info"}},
		{"error", "error", "error", nil},
		{"debug", "debug", "debug", []string{"info", "debug"}},
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var logs []string
			cs := connect(t, tc, "script-progress.yaml", &mcp.ClientOptions{
				//lint:ignore SA1019 2026-07-28 deprecates logging, and still has it
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					mu.Lock()
					logs = append(logs, string(r.Params.Level))
					mu.Unlock()
				},
			})
			stateless := tc.version == ""
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx := ctxT(t)
					p := &mcp.CallToolParams{Name: "build", Arguments: map[string]any{"target": "app"}}
					want := tt.want
					if stateless {
						if tt.meta != nil {
							p.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": tt.meta}
						} else {
							want = nil // 2026-07-28: no level, no logs
						}
					} else if tt.setLevel != "" {
						//lint:ignore SA1019 the handshake era sets the level this way
						if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(tt.setLevel)}); err != nil {
							t.Fatal(err)
						}
					}
					mu.Lock()
					logs = nil
					mu.Unlock()
					res, err := cs.CallTool(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					if got := text(t, res); got != "built app" {
						t.Errorf("text %q", got)
					}
					mu.Lock()
					defer mu.Unlock()
					if !slices.Equal(logs, want) {
						t.Errorf("logs %v, want %v", logs, want)
					}
				})
			}
		})
	}
}

// TestLogLevel_Unknown: a 2026-07-28 request with a level the spec does
// not have is refused, as logging/setLevel refuses one.
func TestLogLevel_Unknown(t *testing.T) {
	srv := serve(t, "script-progress.yaml")
	t.Cleanup(func() { srv.Close() })
	for _, level := range []string{`"loud"`, `3`} {
		got := stdioExchange(t, srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","arguments":{"target":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":`+level+`}}}`)
		if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "unknown log level") {
			t.Errorf("level %s: got %s", level, got)
		}
	}
}

// stdioExchange sends one request line to srv over stdio and returns the
// first line it answers.
func stdioExchange(t *testing.T, srv *replay.Server, line string) string {
	t.Helper()
	ctx := ctxT(t)
	cw, cr, done := servePipes(ctx, srv)
	defer func() { cw.Close(); <-done }()
	go func() { _, _ = io.WriteString(cw, line+"\n") }()
	got, err := bufio.NewReader(cr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, cr) }()
	return got
}
