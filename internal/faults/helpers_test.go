package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// spy is a process on stdio (mcpspy recording a stdio server, mcpmock
// serving), with the client's ends of its stdin and stdout.
type spy struct {
	*peertest.Process
	in  *os.File      // the client writes here
	out *bufio.Reader // and reads here
}

// startStdioSpy runs `bin record -o db -- <this test binary>` with the
// fake server chosen by env.
func startStdioSpy(t *testing.T, bin, db string, env ...string) *spy {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return startStdio(t, t.TempDir(), env, bin, "record", "-o", db, "--", self)
}

// startStdio runs argv in dir, its stdin and stdout pipes whose other ends
// the test holds.
func startStdio(t *testing.T, dir string, env []string, argv ...string) *spy {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := peertest.Start(t, dir, env, inR, outW, argv...)
	inR.Close()
	outW.Close()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return &spy{Process: p, in: inW, out: bufio.NewReaderSize(outR, 64<<10)}
}

// loadTape reads a whole cassette, failing the test if it does not open.
func loadTape(t *testing.T, db string) *store.Tape {
	t.Helper()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatalf("cassette %s does not open: %v", db, err)
	}
	return tape
}

// hwmWatcher polls a process's peak RSS (VmHWM) until it exits, so the
// last value read is the peak of its whole life, taken just before exit.
type hwmWatcher struct {
	done     chan struct{}
	peak     int // KiB; valid after done
	peakFile int // the largest file-backed part of RSS seen (bbolt's mmap), KiB
}

func watchHWM(pid int) *hwmWatcher {
	w := &hwmWatcher{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			kb, ok := peertest.StatusKB(pid, "VmHWM")
			if !ok {
				return
			}
			w.peak = max(w.peak, kb)
			if f, ok := peertest.StatusKB(pid, "RssFile"); ok {
				w.peakFile = max(w.peakFile, f)
			}
		}
	}()
	return w
}

// Peak waits for the process to have exited and returns its peak RSS.
func (w *hwmWatcher) Peak() int { <-w.done; return w.peak }

// waitGoroutines polls until no more goroutines run than before, and
// fails with every goroutine's stack if that does not happen in time.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("goroutine leak: %d running, %d before\n%s", runtime.NumGoroutine(), before, buf.String())
		}
		time.Sleep(5 * time.Millisecond) // polling, not synchronising
	}
}

// waitFor polls cond until it holds or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitExit waits until the process is dead (a zombie or reaped).
// peertest.Start owns Cmd.Wait: a second Wait would race it and hang.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("process %d to exit", pid), func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// pid (comm) state ...: the state follows the last ')'.
		i := bytes.LastIndexByte(b, ')')
		return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
	})
}

// pipedProxy is a StdioProxy in this process, in front of this test
// binary as the fake server, recording into its own cassette. The test is
// the client: it writes In and reads Out.
type pipedProxy struct {
	W    *store.Writer
	In   *io.PipeWriter
	Out  *io.PipeReader
	sess *store.Session
	done chan pipedResult
}

type pipedResult struct {
	res recorder.StdioResult
	err error
}

// startPipedProxy starts the proxy; the fake server is chosen by the
// environment (t.Setenv) as in TestMain.
func startPipedProxy(t *testing.T, db string, opts store.WriterOptions, upstream string, grace time.Duration) *pipedProxy {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.NewWriter(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: upstream})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &recorder.StdioProxy{Command: []string{self}, Stdin: inR, Stdout: outW, Stderr: io.Discard, Tap: sess, Grace: grace}
	pp := &pipedProxy{W: w, In: inW, Out: outR, sess: sess, done: make(chan pipedResult, 1)}
	go func() {
		res, err := p.Run(context.Background())
		outW.Close()
		pp.done <- pipedResult{res, err}
	}()
	return pp
}

// end waits up to d for the proxy to end, closes the client's pipes,
// records how the session ended and closes the cassette.
func (pp *pipedProxy) end(t *testing.T, d time.Duration) {
	t.Helper()
	var r pipedResult
	select {
	case r = <-pp.done:
	case <-time.After(d):
		t.Fatalf("the proxy did not end within %v", d)
	}
	pp.In.Close()
	pp.Out.Close()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := pp.sess.End(r.res.End); err != nil {
		t.Fatal(err)
	}
	if err := pp.W.Close(); err != nil {
		t.Fatal(err)
	}
}
