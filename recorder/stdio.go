package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcptape/mcptape/internal/frame"
	"github.com/mcptape/mcptape/store"
)

// StdioProxy stands between a client on (Stdin, Stdout) and a server child
// process. Every line is handed to the Tap and then forwarded unchanged.
type StdioProxy struct {
	Command []string  // the real server: program and arguments
	Stdin   io.Reader // from the client
	Stdout  io.Writer // to the client
	Stderr  io.Writer // the server's stderr goes here untouched
	// Tap records every line. One that has WaitBacklog (*store.Session)
	// is waited for before a line longer than frame.LongLine is read
	// further, until what it was given before is stored.
	Tap Tap
	// Grace is how long each shutdown step waits for the child to exit
	// (close stdin, then SIGTERM, then SIGKILL, both to its process
	// group), and for what it left running to stop. Default 5 s.
	Grace time.Duration
	// receive, set by StartChild, takes each line the server prints
	// (without its "\n") in place of Stdout: the very line the proxy read
	// and tapped, shared with the Tap as the other recording clients
	// share a frame, not a copy read back from a pipe.
	receive func(frame []byte)
	// input, set by StartChild, takes the client's frames in place of
	// Stdin: given whole, not read back as lines from a pipe.
	input *childInput
}

// StdioResult says how the session ended.
type StdioResult struct {
	End store.EndInfo
	// ExitCode is what mcpspy should exit with: the server's exit code, or
	// 128+signal if it died of a signal.
	ExitCode int
}

// Run starts the server and proxies until it exits. The session ends when
// the server exits, when the client closes its stdin (the server is then
// shut down in steps), or when ctx is cancelled (mcpspy was signalled:
// same shutdown). Run returns an error only when the server cannot start.
func (p *StdioProxy) Run(ctx context.Context) (StdioResult, error) {
	if len(p.Command) == 0 {
		return StdioResult{}, errors.New("no server command")
	}
	grace := p.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	path, err := exec.LookPath(p.Command[0])
	if err != nil {
		return StdioResult{}, fmt.Errorf("server command %q: %w", p.Command[0], err)
	}
	cmd := exec.Command(path, p.Command[1:]...)
	// Own pipes (not StdinPipe/StdoutPipe) so that waiting for the process
	// does not wait for a grandchild that still holds stdout open.
	childIn, toChild, err := os.Pipe()
	if err != nil {
		return StdioResult{}, err
	}
	fromChild, childOut, err := os.Pipe()
	if err != nil {
		return StdioResult{}, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, p.Stderr
	// Its own process group, signalled as one: what a wrapper (sh -c, npx,
	// uv run) started stops with the server instead of being orphaned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A Stderr that is not a file is copied by Wait, which a child left
	// holding stderr would keep waiting: after the exit, grace at most.
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{childIn, toChild, fromChild, childOut} {
			f.Close()
		}
		return StdioResult{}, fmt.Errorf("start server %q: %w", p.Command[0], err)
	}
	childIn.Close()
	childOut.Close()

	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()

	// client → server
	clientEOF := make(chan struct{})
	var closeOnce sync.Once
	closeToChild := func() { closeOnce.Do(func() { toChild.Close() }) }
	go func() {
		var readEnded bool
		if p.input != nil {
			readEnded = p.input.feed(toChild, p.Tap, exited)
		} else {
			readEnded = pump(p.Stdin, writeLine(toChild), store.C2S, p.Tap)
		}
		if readEnded { // the client closed; a write error means the server went
			// Said before the server can see its stdin close: a server
			// that exits at once on EOF still ended because of it.
			close(clientEOF)
		}
		closeToChild()
	}()

	// server → client; done when the server closes stdout.
	serverEOF := make(chan struct{})
	toClient := writeLine(p.Stdout)
	if p.receive != nil {
		toClient = func(line []byte) error { p.receive(frame.Content(line)); return nil }
	}
	go func() {
		defer close(serverEOF)
		pump(fromChild, toClient, store.S2C, p.Tap)
	}()

	// The group's id is the server's pid, which stays reserved while the
	// group has members, so it signals no stranger.
	group := func(sig syscall.Signal) { _ = syscall.Kill(-cmd.Process.Pid, sig) }
	reason := store.EndExit
	stop := func() {
		closeToChild()
		// A host that closed stdin and then, tired of waiting, signals
		// mcpspy (the TypeScript SDK's client: SIGTERM 2 s after EOF,
		// SIGKILL 2 s later) has the signal passed on at once: waiting out
		// the grace instead, mcpspy would be killed with its server still
		// running, orphaned (server-everything lives on for its tasks'
		// 5-minute ttl).
		if waitOrDone(exited, grace, ctx.Done()) {
			return
		}
		group(syscall.SIGTERM)
		if waitOrTimeout(exited, grace) {
			return
		}
		group(syscall.SIGKILL)
		<-exited
	}
	// A Child's Close is its client's EOF at once, even while a frame is
	// being written to a server that does not read it: stop closes the
	// server's stdin, which ends that write.
	var closed <-chan struct{}
	if p.input != nil {
		closed = p.input.closed
	}
	select {
	case <-exited:
		select {
		case <-clientEOF: // both were ready: the EOF came first
			reason = store.EndEOF
		case <-closed:
			reason = store.EndEOF
		default:
		}
	case <-clientEOF:
		reason = store.EndEOF
		stop()
	case <-closed:
		reason = store.EndEOF
		stop()
	case <-ctx.Done():
		// mcpspy was told to stop: pass that on at once, as if the signal
		// had reached the server directly, then escalate.
		reason = store.EndSignal
		closeToChild()
		group(syscall.SIGTERM)
		if !waitOrTimeout(exited, grace) {
			group(syscall.SIGKILL)
			<-exited
		}
	}
	// The server is gone; what it started may not be (it exited on its
	// own, or on EOF, leaving a child): stop that too.
	stopGroup(cmd.Process.Pid, grace)
	// Take what the server wrote before it exited; a grandchild that keeps
	// stdout open does not hold us longer than grace (closing the pipe
	// wakes the reader).
	if !waitOrTimeout(serverEOF, grace) {
		fromChild.Close()
		<-serverEOF
	}
	fromChild.Close()
	closeToChild()

	res := StdioResult{End: store.EndInfo{Time: time.Now(), Reason: reason}}
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.End.Signal = ws.Signal().String()
		if reason == store.EndExit {
			res.End.Reason = store.EndSignal
		}
		code = 128 + int(ws.Signal())
	} else if waitErr != nil && code < 0 {
		res.End.Reason = store.EndError
		res.End.Error = waitErr.Error()
		code = 1
	}
	if reason == store.EndSignal && res.End.Signal == "" {
		res.End.Signal = "mcpspy interrupted"
	}
	res.End.ExitCode = &code
	res.ExitCode = code
	return res, nil
}

// stopGroup stops what is left of process group pgid once its leader is
// gone: SIGTERM, then SIGKILL if a member still runs after grace. The
// members are not our children, so their end is polled for (a zombie no
// one reaps counts as running: it costs grace, no more).
func stopGroup(pgid int, grace time.Duration) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // no member left
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); {
		<-tick.C
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// backlogWaiter is a Tap that can wait for the frames it was given to be
// stored, as *store.Session can.
type backlogWaiter interface {
	WaitBacklog()
}

// pump reads lines from r and hands each to forward, tapping it first. It
// returns at the end of r (readEnded) or when forward fails.
func pump(r io.Reader, forward func(line []byte) error, dir store.Dir, tap Tap) (readEnded bool) {
	lr := frame.NewLineReader(r, 0)
	if b, ok := tap.(backlogWaiter); ok {
		// A long line waits for the store to catch up before it is read
		// further: a run of them is held one at a time, not one per line
		// behind a slower store (with the commit's copy of one besides).
		// The sender is slowed only for such lines, and only while the
		// store works through what came before.
		lr.BeforeLongLine(b.WaitBacklog)
	}
	for {
		line, err := lr.Next()
		if err != nil {
			return true
		}
		tap.Append(dir, time.Now(), frame.Content(line), nil)
		if err := forward(line); err != nil {
			return false
		}
	}
}

// writeLine forwards each line to w, whole, in one Write.
func writeLine(w io.Writer) func(line []byte) error {
	return func(line []byte) error {
		_, err := w.Write(line)
		return err
	}
}

// waitOrDone waits for ch at most d, or until stop (nil: never): it says
// whether ch was closed.
func waitOrDone(ch <-chan struct{}, d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	case <-stop:
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

func waitOrTimeout(ch <-chan struct{}, d time.Duration) bool { return waitOrDone(ch, d, nil) }
