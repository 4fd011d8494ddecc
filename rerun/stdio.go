package rerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"

	"github.com/mcptape/mcptape/internal/frame"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// stdioConn runs the server command behind mcpspy's stdio recorder, which
// taps every line both ways into the tape and shuts the server down in
// steps when the rerun is done.
type stdioConn struct {
	mu     sync.Mutex // serialises writes
	in     *io.PipeWriter
	done   chan struct{} // closed when the server is gone
	read   chan struct{} // closed when its output is read
	end    store.EndInfo
	runErr error
}

func startStdio(ctx context.Context, o Options, t *tape, receive func([]byte)) (conn, error) {
	cr, cw := io.Pipe() // rerun → server
	sr, sw := io.Pipe() // server → rerun
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	// Say at once that the command does not exist (the recorder would,
	// but only on its goroutine).
	if _, err := exec.LookPath(o.Command[0]); err != nil {
		return nil, fmt.Errorf("server command %q: %w", o.Command[0], err)
	}
	p := &recorder.StdioProxy{Command: o.Command, Stdin: cr, Stdout: sw, Stderr: stderr, Tap: t, Grace: o.Grace}
	c := &stdioConn{in: cw, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		res, err := p.Run(ctx)
		if err != nil {
			c.runErr = err
			res.End = store.EndInfo{Reason: store.EndError, Error: err.Error()}
		}
		c.end = res.End
		sw.Close()
		cr.Close() // a send now fails, after runErr is set
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		_ = frame.EachLine(sr, receive)
	}()
	c.read = read
	return c, nil
}

func (c *stdioConn) send(f []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := append(append(make([]byte, 0, len(f)+1), f...), '\n')
	if _, err := c.in.Write(line); err != nil {
		<-c.done // the pipe closes only once the server is gone
		if c.runErr != nil {
			return c.runErr
		}
		return errors.New("the server exited")
	}
	return nil
}

func (c *stdioConn) close() store.EndInfo {
	c.in.Close() // the recorder then shuts the server down in steps
	<-c.done
	<-c.read
	return c.end
}
