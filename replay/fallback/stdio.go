package fallback

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// stdioConn runs the server command behind mcpspy's stdio recorder, which
// taps every line both ways into the new session and, once the fallback
// closes the server's stdin, stops the server in steps (wait, SIGTERM,
// wait, SIGKILL).
type stdioConn struct{ child *recorder.Child }

// startStdio starts the command. lost is told, with the exit status and
// the end of the server's stderr, when the server is gone.
func startStdio(o Options, tap recorder.Tap, receive func([]byte, string), lost func(error)) (*stdioConn, error) {
	tail := &tailWriter{w: o.Stderr}
	p := recorder.StdioProxy{Command: o.Command, Stderr: tail, Tap: tap, Grace: o.Grace}
	// Stopped by closing its stdin, not by a context.
	child, err := recorder.StartChild(context.Background(), p, func(f []byte) { receive(f, "") })
	if err != nil {
		return nil, fmt.Errorf("cannot start it: %w", err)
	}
	go func() {
		<-child.Done() // answers it wrote before it went come first
		end, err := child.Result()
		lost(exitError(err, end, tail.String()))
	}()
	return &stdioConn{child: child}, nil
}

// exitError says how the server went, and the last of what it said.
func exitError(startErr error, end store.EndInfo, stderr string) error {
	var what string
	switch {
	case startErr != nil:
		what = "cannot start it: " + startErr.Error()
	case end.Signal != "":
		what = "it was killed by " + end.Signal
	case end.ExitCode != nil:
		what = fmt.Sprintf("it exited (exit code %d)", *end.ExitCode)
	default:
		what = "it is gone (" + end.Reason + ")"
	}
	if stderr = strings.TrimSpace(stderr); stderr != "" {
		what += "; its stderr ended: " + stderr
	}
	return fmt.Errorf("%s", what)
}

func (c *stdioConn) send(f []byte) error {
	if err := c.child.Send(f); err != nil {
		return fmt.Errorf("the server's stdin is closed: %w", err)
	}
	return nil
}

func (c *stdioConn) negotiated(string) {}

func (c *stdioConn) close() store.EndInfo { return c.child.Close() }

// tailWriter passes a server's stderr on and keeps its last few hundred
// bytes, for the error that says why the server went.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte
}

const tailSize = 400

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailSize {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailSize:]...)
	}
	t.mu.Unlock()
	return t.w.Write(p)
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ReplaceAll(string(t.tail), "\n", " | ")
}
