// Command taprelay is the cheapest recording hop we know how to build, for
// benchmarks to measure beside mcpspy: a TCP relay that records the HTTP
// messages it carries from a copy of the bytes, with no HTTP stack on the
// forwarding path. Each chunk read from one side is parsed (requests and
// responses with net/http's readers, SSE events with internal/sse) and its
// complete messages are appended to a cassette before the chunk is
// written to the other side, so that seq keeps causal order as mcpspy's
// must. It does nothing else a recorder must do: no redaction, no session
// ids (one cassette session per connection), no Host rewrite, no Origin
// check. Not a product; a floor under what recording costs on a machine.
//
//	taprelay -upstream 127.0.0.1:PORT -o CASSETTE
//
// It listens on 127.0.0.1 and prints "taprelay: listening on
// http://HOST:PORT" to stderr when ready; SIGINT or SIGTERM stop it. Like
// mcpspy's network proxy it runs on half the cores unless GOMAXPROCS is
// set.
package main

import (
	"net"
	"sync"

	"github.com/mcptape/mcptape/internal/chunkfeed"
	"github.com/mcptape/mcptape/internal/peertest/hop"
	"github.com/mcptape/mcptape/store"
)

func main() {
	hop.ServeRecording("taprelay", store.WriterOptions{}, relay)
}

// relay carries a client connection and its upstream connection until
// either side ends, recording into s.
func relay(c, up net.Conn, s *store.Session) {
	methods := make(chan string, 64) // requests forwarded, for the response parser
	c2s, s2c := chunkfeed.New(), chunkfeed.New()
	var parsers sync.WaitGroup
	parsers.Go(func() {
		defer c2s.Discard() // the pump never waits on a parser that stopped
		hop.RecordRequests(c2s, s, methods)
	})
	parsers.Go(func() {
		defer s2c.Discard()
		hop.RecordResponses(s2c, s, methods)
	})
	done := make(chan struct{})
	go func() {
		pump(up, c, c2s)
		close(done)
	}()
	pump(c, up, s2c)
	c.Close() // ends the other pump if the client is still sending
	<-done
	parsers.Wait()
}

// pump copies src to dst, each chunk only after the parser has recorded
// what it completes.
func pump(dst, src net.Conn, f *chunkfeed.Feed) {
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f.Put(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}
