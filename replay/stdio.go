package replay

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/mcptape/mcptape/internal/frame"
)

// lineWriter writes one message per line; a whole line per Write, so
// concurrent senders never interleave.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

func (l *lineWriter) write(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	l.buf = append(append(l.buf[:0], msg...), '\n')
	_, l.err = l.w.Write(l.buf)
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
// (answers). It returns nil at the end of r, or ctx's error when ctx ends
// first (r is closed then if it is an io.Closer, to stop the read).
// Requests in flight are cancelled before it returns.
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
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-ctx.Done():
			if c, ok := r.(io.Closer); ok {
				c.Close()
			}
		case <-watchDone:
		}
	}()
	ex := connExchange{out.write}
	lr := frame.NewLineReader(r, 0)
	for {
		line, err := lr.Next()
		if err != nil {
			select {
			case <-stop:
				return nil
			default:
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
				return nil
			}
			return err
		}
		sess.handle(frame.Content(line), ex)
	}
}
