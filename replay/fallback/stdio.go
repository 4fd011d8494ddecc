package fallback

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// stdioConn runs the server command behind mcpspy's stdio recorder, which
// taps every line both ways into the new session and, once the fallback
// closes the server's stdin, stops the server in steps (wait, SIGTERM,
// wait, SIGKILL).
type stdioConn struct {
	child *recorder.Child
	tail  *tailWriter
}

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
	return &stdioConn{child: child, tail: tail}, nil
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

// exitWait bounds how long a failed send waits to learn how the server
// went.
const exitWait = 5 * time.Second

// request sends a request of ours: stdio has no headers for params.
func (c *stdioConn) request(f []byte, _ []mcphttp.ParamHeader, written func()) error {
	err := c.send(f)
	if written != nil {
		written()
	}
	return err
}

func (c *stdioConn) send(f []byte) error {
	err := c.child.Send(f)
	if err == nil {
		return nil
	}
	// The stdin closes as the server goes, a moment before the fallback
	// learns how it went: "it exited (exit code 3); its stderr ended: …"
	// says more than the closed pipe, so wait for that.
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-c.child.Done():
		end, runErr := c.child.Result()
		return exitError(runErr, end, c.tail.String())
	case <-t.C:
		return fmt.Errorf("the server's stdin is closed: %w", err)
	}
}

func (c *stdioConn) abort(string) bool { return false }

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
