//go:build linux || darwin || freebsd || netbsd || openbsd

package recorder

import (
	"errors"
	"syscall"
)

// idleAndOpen reports whether an idle upstream connection is still open:
// the server has neither closed it (a keep-alive timeout; Node closes idle
// connections after 5 s) nor sent anything unasked. It peeks without
// blocking, one system call. A request written to a connection the
// server has just closed would fail after the fact, when it may no longer
// be safe to send it again.
func (u *upstreamConn) idleAndOpen() bool {
	if u.br.Buffered() > 0 {
		return false
	}
	sc, ok := u.conn.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = (errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK))
		return true // never wait for the connection to become readable
	})
	return err == nil && open
}
