package replay

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/mcptape/mcptape/internal/frame"
)

// lineWriter writes one message per line, under a lock, so concurrent
// senders never interleave. A short message is copied with its newline
// into a buffer kept for the next one, so that it goes out in one Write;
// a long one is written as it is and the newline after it, in two: a
// copy would hold a long answer twice, and the buffer, grown to fit it,
// would hold as much for as long as the session lasts (DESIGN.md, "Flat
// memory").
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte // at most oneWriteLine bytes
	err error
}

// oneWriteLine is the longest line lineWriter copies to write it at once.
const oneWriteLine = 64 << 10

var newline = []byte{'\n'}

func (l *lineWriter) write(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if len(msg) < oneWriteLine {
		l.buf = append(append(l.buf[:0], msg...), '\n')
		_, l.err = l.w.Write(l.buf)
		return l.err
	}
	if _, l.err = l.w.Write(msg); l.err == nil {
		_, l.err = l.w.Write(newline)
	}
	return l.err
}

// connExchange sends everything down one connection (stdio, WebSocket,
// legacy SSE).
type connExchange struct{ write func([]byte) error }

func (c connExchange) send(msg []byte) error              { return c.write(msg) }
func (c connExchange) reply(msg []byte, _ bool) error     { return c.write(msg) }
func (connExchange) done()                                {}
func (connExchange) refuse(int, bool, *HTTPRefusal) error { return errNoStatus }

// ServeStdio serves one client session on r (requests, one per line) and w
// (answers). It returns nil at the end of r or when a fault drops the
// connection, or ctx's error when ctx ends first. r and w are closed then
// if they are io.Closers. Requests in flight are cancelled before it
// returns. At the end of r, answers that take no time are still
// written, but calls still waiting (Sleep, a server→client request) are
// given up unanswered (Report.Interrupted): the end of stdin is how an
// MCP client shuts its server down, and it reads no more answers.
//
// It returns without waiting for a read of r that Close cannot interrupt
// (a pipe or terminal in blocking mode, which os.Stdin usually is): a
// fake server must stop on SIGTERM, or on a "close" fault, while its
// client keeps stdin open and says nothing. That read's line, if one
// comes, is dropped.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lineWriter{w: w}
	var hungUp sync.Once
	stop := make(chan struct{})
	hangup := func() {
		hungUp.Do(func() {
			close(stop)
			if c, ok := r.(io.Closer); ok {
				c.Close()
			}
			if c, ok := w.(io.Closer); ok {
				c.Close()
			}
		})
	}
	sess := s.newSession(ctx, out.write, hangup)
	defer sess.drain()

	// The reader hands each line to the session under handling, which
	// ServeStdio takes before it drains the session, so that no line is
	// handled once draining began.
	var handling sync.Mutex
	ended := false
	readDone := make(chan error, 1)
	go func() {
		ex := connExchange{out.write}
		lr := frame.NewLineReader(r, 0)
		for {
			line, err := lr.Next()
			if err != nil {
				readDone <- err
				return
			}
			handling.Lock()
			if ended {
				handling.Unlock()
				return
			}
			sess.handle(frame.Content(line), ex)
			handling.Unlock()
		}
	}()
	var err error
	select {
	case err = <-readDone:
	case <-stop:
	case <-ctx.Done():
		if c, ok := r.(io.Closer); ok {
			c.Close()
		}
	}
	handling.Lock()
	ended = true
	handling.Unlock()
	select {
	case <-stop:
		return nil
	default:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}
