package peertest

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// freePort returns a port on 127.0.0.1 that is free now, for a server
// that is told its port (server-everything reads PORT) and binds it a
// moment later. The port is picked below the kernel's ephemeral range:
// a port the kernel handed out for :0 would be handed out again, to
// another listener or an outgoing connection of the parallel tests, in
// the moment before the server binds it.
func freePort(tb testing.TB) int {
	tb.Helper()
	lo, hi := 20000, ephemeralStart()
	for range 100 {
		port := lo + rand.IntN(hi-lo)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // taken: try another
		}
		l.Close()
		return port
	}
	tb.Fatalf("no free port on 127.0.0.1 between %d and %d after 100 tries", lo, hi)
	return 0
}

// ephemeralStart is where the kernel's ephemeral ports begin (Linux's
// ip_local_port_range; 32768, its default, elsewhere or when unreadable).
func ephemeralStart() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 20000+1000 {
				return n
			}
		}
	}
	return 32768
}
