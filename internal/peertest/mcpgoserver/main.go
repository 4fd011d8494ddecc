// Command mcpgoserver is a small MCP server built on mark3labs/mcp-go, the
// second Go SDK that tests record and replay against (go-sdk's is
// gosdkserver). It serves stdio by default, or Streamable HTTP on
// 127.0.0.1 with -http. It is test plumbing; nothing in the product
// imports mcp-go.
//
// Tools: echo (its text back) and progress (sends steps progress
// notifications to the caller's token, then answers "done N steps").
//
// Over HTTP, flags set mcp-go's options for servers that behave unlike
// its defaults: -stateless (no Mcp-Session-Id), -no-get-stream (GET gets
// 405: no stream of the server's own), -no-delete (DELETE gets 405:
// clients may not end their sessions).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (127.0.0.1:0 picks a port) instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http: issue no Mcp-Session-Id (server.WithStateLess)")
	noGetStream := flag.Bool("no-get-stream", false, "with -http: answer GET with 405 (server.WithDisableStreaming)")
	noDelete := flag.Bool("no-delete", false, "with -http: answer DELETE with 405 (a session id manager that refuses termination)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer()
	if *httpAddr == "" {
		if err := server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
		return
	}
	l, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	// mcp-go's defaults: both eras, and in the handshake era an
	// Mcp-Session-Id that is issued but not checked.
	var opts []server.StreamableHTTPOption
	if *noDelete {
		opts = append(opts, server.WithSessionIdManager(&undeletable{}))
	}
	if *stateless {
		opts = append(opts, server.WithStateLess(true))
	}
	if *noGetStream {
		opts = append(opts, server.WithDisableStreaming(true))
	}
	h := server.NewStreamableHTTPServer(s, opts...)
	srv := &http.Server{Handler: h}
	fmt.Fprintf(os.Stderr, "mcpgoserver: listening on http://%s/mcp\n", l.Addr())
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// undeletable is mcp-go's default session id manager (ids issued, not
// checked), except that it refuses to end a session: DELETE gets 405.
type undeletable struct {
	server.StatelessGeneratingSessionIdManager
}

func (*undeletable) Terminate(string) (isNotAllowed bool, err error) { return true, nil }

func newServer() *server.MCPServer {
	s := server.NewMCPServer("mcpgoserver", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its text"),
		mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Reports progress in steps"),
		mcp.WithNumber("steps", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			steps := req.GetInt("steps", 0)
			var tok mcp.ProgressToken
			if req.Params.Meta != nil {
				tok = req.Params.Meta.ProgressToken
			}
			for i := 1; i <= steps && tok != nil; i++ {
				err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": tok, "progress": i, "total": steps, "message": fmt.Sprintf("step %d", i),
				})
				if err != nil {
					return nil, err
				}
			}
			return mcp.NewToolResultText(fmt.Sprintf("done %d steps", steps)), nil
		})
	return s
}
