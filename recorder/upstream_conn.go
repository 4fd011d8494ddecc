package recorder

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// upstreamConn is the way to a plain-http upstream for one client
// connection of the HTTP proxy: one upstream connection of its own, kept
// alive between requests, used from the handler's goroutine. A client
// connection sends one request at a time, so it needs no pool and no
// reader and writer goroutines as http.Transport keeps for every
// connection; each round trip is a write and the reads of its answer.
//
// It is an http.RoundTripper for one caller at a time. A request's
// context ending closes the connection, which ends the round trip or the
// body being read; but not before the request is written: a client may
// post a whole message and leave at once (a script that fires a
// notification and exits), and a server it talked to directly would
// still read it, so the proxy delivers it, then gives the answer up as
// the client did. Its leaving then bounds the write by writeGrace.
type upstreamConn struct {
	addr   string // host:port
	dialer net.Dialer

	conn net.Conn // nil until dialled, and after a failure
	br   *bufio.Reader
	bw   *bufio.Writer
	busy bool // a response on conn has not been closed yet

	// beforeRead, when set, runs before each read from the connection.
	// A relay sets it to flush what it has written to its client, so
	// that nothing waits in a buffer while the relay waits upstream, and
	// what arrived in one read leaves in one write.
	beforeRead func()
}

// connReader reads u's current connection, running u.beforeRead first.
type connReader struct{ u *upstreamConn }

func (r connReader) Read(p []byte) (int, error) {
	if r.u.beforeRead != nil {
		r.u.beforeRead()
	}
	c := r.u.conn
	if c == nil {
		// Closed: upstreamBody.Close of an answer not read to its end,
		// which net/http's body.Close then tries to drain.
		return 0, net.ErrClosed
	}
	return c.Read(p)
}

func newUpstreamConn(addr string) *upstreamConn {
	return &upstreamConn{addr: addr, dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// RoundTrip sends req and reads the head of its answer; the body streams
// from the connection as it is read.
func (u *upstreamConn) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if u.conn != nil && (u.busy || !u.idleAndOpen()) {
		// Closed by the server while idle, or still holding an answer
		// nobody finished: not reusable.
		u.Close()
	}
	if u.conn == nil {
		// Not cancelled by the client's leaving either (see above); the
		// dialer's timeout bounds it.
		c, err := u.dialer.DialContext(context.WithoutCancel(ctx), "tcp", u.addr)
		if err != nil {
			return nil, err
		}
		u.conn = c
		if u.br == nil {
			u.br, u.bw = bufio.NewReaderSize(connReader{u}, 16<<10), bufio.NewWriterSize(c, 4<<10)
		} else {
			u.br.Reset(connReader{u})
			u.bw.Reset(c)
		}
	}
	conn := u.conn
	// While the request is written, the client's leaving only bounds the
	// write; once it is written, it ends the round trip.
	bounded := context.AfterFunc(ctx, func() { conn.SetWriteDeadline(time.Now().Add(writeGrace)) })
	stop := bounded
	fail := func(err error) (*http.Response, error) {
		stop()
		u.busy = false
		u.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	u.busy = true
	if err := req.Write(u.bw); err != nil {
		return fail(err)
	}
	if err := u.bw.Flush(); err != nil {
		return fail(err)
	}
	if !bounded() {
		// The client left while the request was written. Whether or not
		// the deadline is set yet, the AfterFunc below closes conn at
		// once, so it is never used again.
		_ = conn.SetWriteDeadline(time.Time{})
	}
	stop = context.AfterFunc(ctx, func() { conn.Close() })
	for {
		resp, err := http.ReadResponse(u.br, req)
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body = &upstreamBody{u: u, conn: conn, body: resp.Body, keep: !resp.Close, stop: stop, length: resp.ContentLength}
			return resp, nil
		}
		// 100 Continue and other interim answers: the final one follows.
		resp.Body.Close()
	}
}

// Close closes the connection, ending any round trip on it; the next
// round trip dials anew.
func (u *upstreamConn) Close() {
	if u.conn != nil {
		u.conn.Close()
		u.conn = nil
	}
}

// upstreamBody is a response body on an upstreamConn. Read to its end
// with the connection still good, it leaves the connection for the next
// request; closed early, it closes the connection (what is left of the
// answer cannot be told from the next one).
type upstreamBody struct {
	u      *upstreamConn
	conn   net.Conn
	body   io.ReadCloser
	keep   bool
	stop   func() bool
	length int64 // Content-Length, or -1

	once sync.Once
	eof  bool
	read int64
}

// flushBeforeRead makes flush run before each read of the rest of the
// body from the network; the returned function undoes it.
func (b *upstreamBody) flushBeforeRead(flush func()) (undo func()) {
	b.u.beforeRead = flush
	return func() { b.u.beforeRead = nil }
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.read += int64(n)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// done says whether the whole answer has been read: EOF seen, or all of
// a declared length (a reader that takes exactly Content-Length bytes
// never sees the EOF), or no body at all (a 202).
func (b *upstreamBody) done() bool {
	return b.eof || b.body == http.NoBody || (b.length >= 0 && b.read >= b.length)
}

func (b *upstreamBody) Close() error {
	b.once.Do(func() {
		cancelled := !b.stop()
		if b.u.conn == b.conn {
			b.u.busy = false
		}
		if !b.done() || !b.keep || cancelled {
			b.conn.Close()
			if b.u.conn == b.conn {
				b.u.conn = nil
			}
		}
		b.body.Close()
	})
	return nil
}
