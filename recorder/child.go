package recorder

import (
	"context"
	"io"
	"os/exec"
	"time"

	"github.com/mcptape/mcptape/store"
)

// Child is a StdioProxy whose client is in this process (mcpspy rerun,
// mcpmock's fallback to a real server): frames given to Send go to the
// server's stdin as lines, each line the server prints goes to a receive
// func, and the proxy records both through its Tap as mcpspy record
// would. Closing it closes the server's stdin, and the proxy stops the
// server in steps.
//
// Send may be called from many goroutines; receive is called on one.
type Child struct {
	in     *childInput
	exited chan struct{} // closed when the server is gone
	done   chan struct{} // closed once, as well, its output is read
	end    store.EndInfo
	err    error // why the proxy failed, if it did
}

// StartChild runs p, whose Stdin it provides, calling receive with each
// line the server prints, without its "\n". A command that cannot be
// found is an error at once (the proxy would say so only on its
// goroutine). The server runs until Close, its own exit, or ctx.
//
// receive gets the line the proxy read and gave its Tap, not a copy: it
// must not change it (nor must the Tap). Reading it once, not again from a
// pipe into a second line reader, keeps a long line's cost to what the
// stdio recorder's is: the line, its pieces while read, the store's copy.
func StartChild(ctx context.Context, p StdioProxy, receive func(line []byte)) (*Child, error) {
	if _, err := exec.LookPath(p.Command[0]); err != nil {
		return nil, err
	}
	in := &childInput{frames: make(chan childFrame), closed: make(chan struct{}), ended: make(chan struct{})}
	p.Stdin, p.Stdout, p.input, p.receive = nil, nil, in, receive
	c := &Child{in: in, exited: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		// Run returns once the server is gone and what it printed has
		// been received.
		res, err := p.Run(ctx)
		if err != nil {
			res.End = store.EndInfo{Reason: store.EndError, Error: err.Error()}
		}
		c.end, c.err = res.End, err
		close(c.exited) // a Send now fails, if it did not already
	}()
	return c, nil
}

// Send writes one frame and its newline to the server, and gives the
// frame to the Tap, which owns it afterwards: the caller must not change
// it. An error means its stdin is closed: the server is gone, or going
// (Result says how, once Exited is closed).
//
// The frame is written as it is, not copied to add the newline, and not
// read back from a pipe: a long frame is held once, by its caller and the
// Tap (DESIGN.md, "Flat memory").
func (c *Child) Send(f []byte) error {
	done := make(chan error, 1)
	select {
	case c.in.frames <- childFrame{f, done}:
		return <-done
	case <-c.in.ended:
	case <-c.in.closed:
	case <-c.exited: // the proxy did not start
	}
	return io.ErrClosedPipe // as a write to the closed stdin would say
}

// Exited is closed when the server is gone.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Done is closed when the server is gone and its output received.
func (c *Child) Done() <-chan struct{} { return c.done }

// Result is how the server ended, and the proxy's error if it could not
// run it. Valid once Exited is closed.
func (c *Child) Result() (store.EndInfo, error) { return c.end, c.err }

// Close closes the server's stdin, which has the proxy stop it in steps,
// waits for it and its output, and returns how it ended.
func (c *Child) Close() store.EndInfo {
	c.in.closeOnce()
	<-c.done
	return c.end
}

// childInput is a Child's side of the server's stdin: the frames Send
// gives the proxy's one writer, in place of lines read from a client.
type childInput struct {
	frames chan childFrame
	closed chan struct{} // Close: the client is done, as at its EOF
	ended  chan struct{} // the writer stopped: no frame is taken now
}

// childFrame is a frame to write, and where to say how its write went.
type childFrame struct {
	f    []byte
	done chan<- error
}

func (in *childInput) closeOnce() {
	select {
	case <-in.closed:
	default:
		close(in.closed)
	}
}

// feed writes each frame Send gives to w, the server's stdin, tapping it
// first, until Close (closed: the client's EOF), a failed write or the
// server's exit. It is the one writer of w: each frame and its newline go
// out together, never between another frame's parts.
func (in *childInput) feed(w io.Writer, tap Tap, exited <-chan struct{}) (closed bool) {
	defer close(in.ended)
	for {
		select {
		case <-in.closed:
			return true
		case <-exited:
			select {
			case <-in.closed: // both were ready: the client's end came first
				return true
			default:
				return false
			}
		case cf := <-in.frames:
			err := writeFrame(w, tap, cf.f)
			cf.done <- err
			if err != nil {
				return false
			}
		}
	}
}

// newline ends each frame written to the server.
var newline = []byte{'\n'}

// writeFrame taps f and writes it and a newline to w, in two writes: the
// frame is not copied to add one. A long frame first waits for the Tap's
// backlog and a collection (waitToSend), as the stdio pump does before it
// reads one.
func writeFrame(w io.Writer, tap Tap, f []byte) error {
	waitToSend(tap, f)
	tap.Append(store.C2S, time.Now(), f, nil)
	if _, err := w.Write(f); err != nil {
		return err
	}
	_, err := w.Write(newline)
	return err
}
