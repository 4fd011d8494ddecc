// Command gosdkserver is a small MCP server built on go-sdk, the real Go
// peer that tests and benchmarks record and compare against. It serves
// stdio by default, or Streamable HTTP on 127.0.0.1 with -http.
//
// Its tools are package gosdk's.
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

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (127.0.0.1:0 picks a port) instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http: no sessions")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := gosdk.NewServer("gosdkserver")
	if *httpAddr == "" {
		if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
		return
	}
	l, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: *stateless})
	srv := &http.Server{Handler: h}
	fmt.Fprintf(os.Stderr, "gosdkserver: listening on http://%s/\n", l.Addr())
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
