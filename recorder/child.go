package recorder

import (
	"context"
	"io"
	"os/exec"
	"sync"

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
	mu     sync.Mutex // one line at a time
	in     *io.PipeWriter
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
	cr, cw := io.Pipe() // client → server
	p.Stdin, p.Stdout, p.receive = cr, nil, receive
	c := &Child{in: cw, exited: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		// Run returns once the server is gone and what it printed has
		// been received.
		res, err := p.Run(ctx)
		if err != nil {
			res.End = store.EndInfo{Reason: store.EndError, Error: err.Error()}
		}
		c.end, c.err = res.End, err
		cr.Close() // a Send now fails
		close(c.exited)
	}()
	return c, nil
}

// Send writes one frame and its newline to the server. An error means its
// stdin is closed: the server is gone, or going (Result says how, once
// Exited is closed).
func (c *Child) Send(f []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.in.Write(append(append(make([]byte, 0, len(f)+1), f...), '\n'))
	return err
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
	c.in.Close()
	<-c.done
	return c.end
}
