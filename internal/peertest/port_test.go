package peertest

import (
	"net"
	"strconv"
	"testing"
)

// freePort's port is free and outside the kernel's ephemeral range, so a
// listener on :0 cannot be handed it.
func TestFreePort(t *testing.T) {
	for range 20 {
		port := freePort(t)
		if port < 20000 || port >= ephemeralStart() {
			t.Fatalf("port %d, want one in [20000, %d)", port, ephemeralStart())
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
	}
}
