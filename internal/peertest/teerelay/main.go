//go:build linux

// Command teerelay is an experiment, not a product: a recording hop whose
// forwarding never brings the bytes into user space. Each direction is
// spliced (splice(2)) from one socket into a pipe and from the pipe to the
// other socket, as tcprelay's io.Copy does; tee(2) first duplicates what
// the pipe holds into a second pipe, which a parser goroutine reads and
// records from (net/http's readers, as taprelay's).
//
// It answers one question for issue #3's speed target: how fast can a
// recording hop be if recording leaves the forwarding path altogether?
// BenchmarkHTTPRoundTrip runs it when MCPTAPE_BENCH_LEAN names its binary.
// The price is what makes it no design for mcpspy: a frame is recorded
// after it was forwarded, at whatever moment its parser gets to it, so
// seq no longer follows causal order (an answer can be recorded before
// its request); and a hop that forwards in the kernel can change nothing
// it forwards (no Host or endpoint rewriting, no 502 of its own). Like
// taprelay it does no redaction, no sessions by id and no Origin check.
// Linux only.
//
//	teerelay -upstream 127.0.0.1:PORT -o CASSETTE
//
// It listens on 127.0.0.1, prints "teerelay: listening on
// http://HOST:PORT" to stderr when ready, and runs on half the cores
// unless GOMAXPROCS is set, as mcpspy's network proxy does.
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"

	"github.com/mcptape/mcptape/internal/peertest/hop"
	"github.com/mcptape/mcptape/store"
	"golang.org/x/sys/unix"
)

func main() {
	hop.ServeRecording("teerelay", store.WriterOptions{NoSync: true}, relay)
}

// relay carries a client connection and its upstream connection until
// either side ends, recording into s.
func relay(c, u net.Conn, s *store.Session) {
	up := u.(*net.TCPConn)
	c2s, err := newTee()
	if err != nil {
		log.Printf("teerelay: %v", err)
		return
	}
	s2c, err := newTee()
	if err != nil {
		c2s.close()
		log.Printf("teerelay: %v", err)
		return
	}
	methods := make(chan string, 64) // requests forwarded, for the response parser
	var parsers sync.WaitGroup
	parsers.Go(func() { c2s.record(func(r io.Reader) { hop.RecordRequests(r, s, methods) }) })
	parsers.Go(func() { s2c.record(func(r io.Reader) { hop.RecordResponses(r, s, methods) }) })
	done := make(chan struct{})
	go func() {
		c2s.pump(up, c.(*net.TCPConn))
		close(done)
	}()
	s2c.pump(c.(*net.TCPConn), up)
	c.Close() // ends the other pump if the client is still sending
	<-done
	parsers.Wait()
}

// tee is one direction's pipes: pipeR/pipeW carry the forwarded bytes
// through the kernel, copyW/copyR carry tee's duplicate to the parser.
type tee struct {
	pipeR, pipeW, copyW int
	copyR               *os.File
}

func newTee() (*tee, error) {
	var fwd, dup [2]int
	if err := unix.Pipe2(fwd[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	// The copy's write end blocks: tee waits for the parser rather than
	// drop bytes. A large pipe keeps that wait rare.
	if err := unix.Pipe2(dup[:], unix.O_CLOEXEC); err != nil {
		unix.Close(fwd[0])
		unix.Close(fwd[1])
		return nil, fmt.Errorf("pipe: %w", err)
	}
	_, _ = unix.FcntlInt(uintptr(dup[1]), unix.F_SETPIPE_SZ, 1<<20)
	_ = unix.SetNonblock(dup[0], true) // so that os.File reads through the poller
	return &tee{pipeR: fwd[0], pipeW: fwd[1], copyW: dup[1], copyR: os.NewFile(uintptr(dup[0]), "tee copy")}, nil
}

// close releases the pipes; the parser, if running, then reads to the end
// of what the copy holds.
func (t *tee) close() {
	unix.Close(t.pipeR)
	unix.Close(t.pipeW)
	unix.Close(t.copyW)
}

// record runs parse on the copy, then drains what parse left, so that tee
// never waits on a parser that stopped.
func (t *tee) record(parse func(io.Reader)) {
	defer t.copyR.Close()
	parse(t.copyR)
	_, _ = io.Copy(io.Discard, t.copyR)
}

// pump moves src to dst through the kernel, duplicating each chunk into
// the copy pipe before it leaves, until src ends or either side fails;
// then it half-closes dst, as a transparent hop would.
func (t *tee) pump(dst, src *net.TCPConn) {
	defer func() {
		t.close()
		_ = dst.CloseWrite()
	}()
	rsrc, err := src.SyscallConn()
	if err != nil {
		return
	}
	rdst, err := dst.SyscallConn()
	if err != nil {
		return
	}
	const flags = unix.SPLICE_F_NONBLOCK | unix.SPLICE_F_MOVE
	for {
		var n int64
		var serr error
		err := rsrc.Read(func(fd uintptr) bool {
			n, serr = unix.Splice(int(fd), nil, t.pipeW, nil, 1<<16, flags)
			return !errors.Is(serr, unix.EAGAIN)
		})
		if err != nil || serr != nil || n == 0 {
			return
		}
		// tee copies without consuming: the forwarding pipe holds exactly
		// these n bytes. A partial copy cannot be finished (a second tee
		// would copy the same first bytes again), but the copy pipe is a
		// megabyte, larger than any chunk, so one happens only when the
		// parser has fallen that far behind.
		if m, err := unix.Tee(t.pipeR, t.copyW, int(n), 0); err != nil || m < n {
			log.Printf("teerelay: tee copied %d of %d bytes (%v); the connection ends", m, n, err)
			return
		}
		for n > 0 {
			var m int64
			err := rdst.Write(func(fd uintptr) bool {
				m, serr = unix.Splice(t.pipeR, nil, int(fd), nil, int(n), flags)
				return !errors.Is(serr, unix.EAGAIN)
			})
			if err != nil || serr != nil {
				return
			}
			n -= m
		}
	}
}
