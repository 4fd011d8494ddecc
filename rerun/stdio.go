package rerun

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// stdioConn runs the server command behind mcpspy's stdio recorder, which
// taps every line both ways into the tape and shuts the server down in
// steps when the rerun is done.
type stdioConn struct{ child *recorder.Child }

func startStdio(ctx context.Context, o Options, t *tape, receive func([]byte)) (conn, error) {
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	child, err := recorder.StartChild(ctx, recorder.StdioProxy{Command: o.Command, Stderr: stderr, Tap: t, Grace: o.Grace}, receive)
	if err != nil {
		return nil, fmt.Errorf("server command %q: %w", o.Command[0], err)
	}
	return &stdioConn{child: child}, nil
}

func (c *stdioConn) send(f []byte, _ *step) error {
	if err := c.child.Send(f); err != nil {
		<-c.child.Exited() // the pipe closes only once the server is gone
		end, runErr := c.child.Result()
		switch {
		case runErr != nil:
			return runErr
		case end.Signal != "":
			return fmt.Errorf("the server was stopped by a signal: %s", end.Signal) // "killed", "segmentation fault"
		case end.ExitCode != nil:
			return fmt.Errorf("the server exited with status %d", *end.ExitCode)
		}
		return errors.New("the server exited")
	}
	return nil
}

func (c *stdioConn) close() store.EndInfo { return c.child.Close() }

func (c *stdioConn) ended() <-chan struct{} { return c.child.Exited() }
