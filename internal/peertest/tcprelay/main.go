// Command tcprelay copies bytes between each client connection and a new
// connection to one upstream address, and does nothing else: no HTTP, no
// recording. Benchmarks put it beside mcpspy to measure what any extra
// hop costs on the machine, the floor under mcpspy's own overhead.
//
//	tcprelay -upstream 127.0.0.1:PORT
//
// It listens on 127.0.0.1 and prints "tcprelay: listening on
// http://HOST:PORT" to stderr when ready; SIGINT or SIGTERM stop it.
package main

import (
	"flag"
	"io"
	"log"
	"net"

	"github.com/mcptape/mcptape/internal/peertest/hop"
)

func main() {
	upstream := flag.String("upstream", "", "HOST:PORT to relay to")
	flag.Parse()
	if *upstream == "" {
		log.Fatal("tcprelay: -upstream is required")
	}
	hop.Serve("tcprelay", func(c net.Conn) { relay(c.(*net.TCPConn), *upstream) })
}

// relay copies both ways until both directions end; each side's end is
// passed on as a half close, as a transparent hop would.
func relay(c *net.TCPConn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	up := u.(*net.TCPConn)
	defer up.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		_ = up.CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	_ = c.CloseWrite()
	<-done
}
