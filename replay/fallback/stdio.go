package fallback

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/mcptape/mcptape/internal/frame"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// stdioConn runs the server command behind mcpspy's stdio recorder, which
// taps every line both ways into the new session and, once the fallback
// closes the server's stdin, stops the server in steps (wait, SIGTERM,
// wait, SIGKILL).
type stdioConn struct {
	mu   sync.Mutex // one line at a time
	in   *io.PipeWriter
	done chan struct{} // closed when the server is gone and its output read
	end  store.EndInfo
}

// startStdio starts the command. lost is told, with the exit status and
// the end of the server's stderr, when the server is gone.
func startStdio(o Options, tap recorder.Tap, receive func([]byte, string), lost func(error)) (*stdioConn, error) {
	// Say at once that the command does not exist (the recorder would,
	// but only on its goroutine).
	if _, err := exec.LookPath(o.Command[0]); err != nil {
		return nil, fmt.Errorf("cannot start it: %w", err)
	}
	cr, cw := io.Pipe() // fallback → server
	sr, sw := io.Pipe() // server → fallback
	tail := &tailWriter{w: o.Stderr}
	p := &recorder.StdioProxy{Command: o.Command, Stdin: cr, Stdout: sw, Stderr: tail, Tap: tap, Grace: o.Grace}
	c := &stdioConn{in: cw, done: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		_ = frame.EachLine(sr, func(f []byte) { receive(f, "") })
	}()
	go func() {
		defer close(c.done)
		res, err := p.Run(context.Background()) // stopped by closing its stdin
		if err != nil {
			res.End = store.EndInfo{Reason: store.EndError, Error: err.Error()}
		}
		c.end = res.End
		sw.Close()
		cr.Close() // a send now fails
		<-read     // answers it wrote before it went come first
		lost(exitError(err, res.End, tail.String()))
	}()
	return c, nil
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
	c.mu.Lock()
	defer c.mu.Unlock()
	line := append(append(make([]byte, 0, len(f)+1), f...), '\n')
	if _, err := c.in.Write(line); err != nil {
		return fmt.Errorf("the server's stdin is closed: %w", err)
	}
	return nil
}

func (c *stdioConn) negotiated(string) {}

func (c *stdioConn) close() store.EndInfo {
	c.in.Close()
	<-c.done
	return c.end
}

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
