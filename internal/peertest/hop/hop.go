// Package hop is what the benchmarks' stand-in hops (tcprelay, taprelay,
// leanrelay, teerelay) share: a loopback listener that announces itself
// the way mcpspy does, an accept loop that a signal ends, mcpspy's share
// of the cores, for the recording ones their whole main, and the parsers
// that record from a copy of a connection's bytes. Not product code; it must never be imported outside
// internal/peertest.
package hop

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"github.com/mcptape/mcptape/store"
)

// Serve listens on 127.0.0.1, prints "NAME: listening on http://HOST:PORT"
// to stderr, and runs handle for each connection until SIGINT or SIGTERM;
// it returns once every handle has.
func Serve(name string, handle func(net.Conn)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	fmt.Fprintf(os.Stderr, "%s: listening on http://%s\n", name, ln.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() { <-stop; ln.Close() }()
	var conns sync.WaitGroup
	for {
		c, err := ln.Accept()
		if err != nil {
			break // closed by a signal
		}
		conns.Go(func() { handle(c) })
	}
	conns.Wait()
}

// HalfTheCores runs the process on half the cores, as mcpspy's network
// proxy does, unless GOMAXPROCS is set.
func HalfTheCores() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()/2))
	}
}

// ServeRecording is the main of a recording hop: flags -upstream
// HOST:PORT (required) and -o CASSETTE (default NAME.db), half the cores,
// a cassette writer with opts, and relay for each connection until a
// signal; the cassette is closed last. Each client connection c gets a new
// upstream connection up and a cassette session s of its own: relay
// carries the traffic; both connections are closed and s ended when it
// returns.
func ServeRecording(name string, opts store.WriterOptions, relay func(c, up net.Conn, s *store.Session)) {
	upstream := flag.String("upstream", "", "HOST:PORT to relay to")
	out := flag.String("o", name+".db", "cassette to record into")
	flag.Parse()
	if *upstream == "" {
		log.Fatalf("%s: -upstream is required", name)
	}
	HalfTheCores()
	w, err := store.NewWriter(*out, opts)
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	Serve(name, func(c net.Conn) { RecordConn(name, c, *upstream, w, relay) })
	if err := w.Close(); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
}

// RecordConn dials upstream and opens a session of w for c, runs relay,
// then closes both connections and ends the session: ServeRecording's work
// for each connection, for tests that run a relay in process.
func RecordConn(name string, c net.Conn, upstream string, w *store.Writer, relay func(c, up net.Conn, s *store.Session)) {
	defer c.Close()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP, Upstream: upstream})
	if err != nil {
		log.Printf("%s: %v", name, err)
		return
	}
	defer func() { _ = s.End(store.EndInfo{Reason: store.EndEOF}) }()
	relay(c, up, s)
}
