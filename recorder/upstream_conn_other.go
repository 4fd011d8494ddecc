//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package recorder

// idleAndOpen cannot peek here; an idle connection is taken to be open
// unless the reader already holds bytes nobody asked for.
func (u *upstreamConn) idleAndOpen() bool { return u.br.Buffered() == 0 }
