package faults_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// soakSample is the process's state at one point of a soak, taken after a
// full collection that also returns freed memory to the OS.
type soakSample struct {
	done       int    // messages through the proxy so far
	goroutines int    // runtime.NumGoroutine
	heapInuse  uint64 // bytes in in-use heap spans
	heapAlloc  uint64 // bytes of live heap objects
	rssAnon    int    // KiB of anonymous resident memory (Linux); 0 if unknown
	// heapBeforeFlush is HeapInuse (without a GC) before the store caught
	// up: with what it had not committed yet.
	heapBeforeFlush uint64
}

func takeSample(done int) soakSample {
	debug.FreeOSMemory() // a GC, then freed spans go back to the OS
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ := peertest.StatusKB(os.Getpid(), "RssAnon")
	return soakSample{done: done, goroutines: runtime.NumGoroutine(), heapInuse: ms.HeapInuse, heapAlloc: ms.HeapAlloc, rssAnon: rss}
}

// soakLimit is how far a measure may grow from the 20% sample to any
// later one: 1.5× the baseline plus slack. Each sample is taken once the
// store has committed everything, so what may legitimately differ between
// two is only what is in flight: at most the pipes' worth of frames (64 KiB
// each way, under 1 MiB with their Message structs) and bufio buffers.
//
// The live heap (HeapAlloc after a GC) gets 4 MiB: that covers the
// in-flight part several times over, and measured runs stay within 1 MiB
// of the baseline (1-4 MiB). A leak of 100 bytes a message (a kept frame
// is ~200, a map entry per seq ~60) adds 8 MiB over the 80k messages after
// the baseline, over the default ~6 MiB allowance, and 80 MiB over the
// long form's 800k. HeapInuse (whole spans) and anonymous RSS also carry
// allocator fragmentation, which swung by up to 6 MiB between samples of
// the long form under -race: they get 8 MiB, and still catch a leak of a
// frame a message.
func soakLimit(base uint64, slack uint64) uint64 { return base + base/2 + slack }

// Many messages through an in-process StdioProxy and a real store.Writer,
// with the test binary as the server: no goroutine is added and the heap
// (and anonymous RSS) does not grow between 20% and 100% of the run; every
// message is in the cassette, in order, with dense seqs. 100k messages by
// default, 1M with -faults.long.
func TestSoak_Stdio(t *testing.T) {
	n := pick(100_000, 1_000_000)
	for _, tc := range []struct {
		name  string
		env   []string
		drive func(t *testing.T, n int, in io.WriteCloser, out *bufio.Reader, sample func(done int))
		check func(m *store.Message, c *soakCheck) error
	}{
		{
			// The server streams numbered notifications, with a 1 ms pause
			// every 1000 so the run lasts a while as a real stream would.
			name:  "server flood",
			env:   []string{"MCPTAPE_FAKE_SERVER=flood", "MCPTAPE_FLOOD_N=" + strconv.Itoa(n), "MCPTAPE_FLOOD_PAD=100", "MCPTAPE_FLOOD_BURST=1000"},
			drive: driveFlood,
			check: checkFlood,
		},
		{
			// The client pipelines n/2 requests and the server answers
			// each: both directions, both pumps, interleaved in the store.
			name:  "requests and answers",
			env:   []string{"MCPTAPE_FAKE_SERVER=big"},
			drive: driveEcho,
			check: checkEcho,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			runSoak(t, n, tc.drive, tc.check)
		})
	}
}

func runSoak(t *testing.T, n int, drive func(*testing.T, int, io.WriteCloser, *bufio.Reader, func(int)), check func(*store.Message, *soakCheck) error) {
	before := runtime.NumGoroutine()
	db := filepath.Join(t.TempDir(), "soak.db")
	// MaxPending 8 MiB instead of mcpspy's 256: when the store lags (it
	// does under -race, see below), the proxy waits for it after 8 MiB
	// rather than 256, so the transient backlog stays small next to what
	// is measured, and the soak also runs through that back-pressure path.
	pp := startPipedProxy(t, db, store.WriterOptions{NoSync: true, MaxPending: 8 << 20}, "soak", 0)
	w := pp.W

	var samples []soakSample
	next := 1
	drive(t, n, pp.In, bufio.NewReaderSize(pp.Out, 64<<10), func(k int) {
		// Samples at 20%, 40%, … 100% of the messages, each once the
		// store has caught up. The client is not reading meanwhile, so the
		// proxy is held up by the pipes, and Flush commits what it has.
		//
		// Why flush first: what the store has not committed yet is
		// buffered by design (up to MaxPending), and under -race the
		// instrumented store commits ~60k messages/s, slower than the
		// flood sends: with the default MaxPending and no flushes, that
		// backlog grew 9 → 37 MiB over the default run. That is the
		// recorder's throughput (the recording-rate benchmark measures
		// it), not memory kept per message, which is what a soak must
		// rule out. The heap before the flush is logged.
		if next <= 5 && k >= next*n/5 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if err := w.Flush(); err != nil {
				t.Errorf("flush at %d messages: %v", k, err)
			}
			s := takeSample(k)
			s.heapBeforeFlush = ms.HeapInuse
			samples = append(samples, s)
			next++
		}
	})
	pp.In.Close() // the client is done: the proxy ends
	pp.end(t, 60*time.Second)
	if t.Failed() {
		t.FailNow()
	}

	if len(samples) != 5 {
		t.Fatalf("%d samples, want 5 (the client saw fewer than %d messages)", len(samples), n)
	}
	base := samples[0]
	for _, s := range samples {
		t.Logf("%7d messages: %d goroutines, heap live %.1f MiB in use %.1f MiB (%.1f MiB in use before the store caught up), anonymous RSS %.1f MiB",
			s.done, s.goroutines, float64(s.heapAlloc)/(1<<20), float64(s.heapInuse)/(1<<20), float64(s.heapBeforeFlush)/(1<<20), float64(s.rssAnon)/(1<<10))
	}
	for _, s := range samples[1:] {
		// The proxy's goroutines are fixed for a session's life (child
		// waiter, two pumps, stderr copier, the store's commit loop): any
		// more by now is one per message or per commit.
		if s.goroutines > base.goroutines {
			t.Errorf("at %d messages %d goroutines, %d at %d", s.done, s.goroutines, base.goroutines, base.done)
		}
		for _, m := range []struct {
			what      string
			base, now uint64
			slack     uint64
		}{
			{"live heap", base.heapAlloc, s.heapAlloc, 4 << 20},
			{"heap in use", base.heapInuse, s.heapInuse, 8 << 20},
			// FreeOSMemory returned freed spans, so what is resident is
			// what is live plus the runtime's own, fixed, costs.
			{"anonymous RSS", uint64(base.rssAnon) << 10, uint64(s.rssAnon) << 10, 8 << 20},
		} {
			if lim := soakLimit(m.base, m.slack); m.base > 0 && m.now > lim {
				t.Errorf("at %d messages the %s is %.1f MiB, over %.1f MiB (1.5× the %.1f MiB at %d messages, + %d MiB)",
					s.done, m.what, float64(m.now)/(1<<20), float64(lim)/(1<<20), float64(m.base)/(1<<20), base.done, m.slack>>20)
			}
		}
	}

	// Every message is in the cassette, with seqs 1..n, in the order the
	// proxy read them. Streamed: the long form's 1M frames are not loaded
	// at once.
	c := &soakCheck{}
	err := store.View(db, func(rd *store.Reader) error {
		infos, err := rd.Sessions()
		if err != nil {
			return err
		}
		if len(infos) != 1 {
			return fmt.Errorf("%d sessions, want 1", len(infos))
		}
		if infos[0].End == nil {
			return fmt.Errorf("session %s has no end", infos[0].ID)
		}
		return rd.Messages(infos[0].ID, 1, func(m *store.Message) error {
			c.seq++
			if m.Seq != c.seq {
				return fmt.Errorf("message %d has seq %d", c.seq, m.Seq)
			}
			return check(m, c)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.seq != uint64(n) {
		t.Errorf("the cassette holds %d messages, want %d", c.seq, n)
	}
	waitGoroutines(t, before)
}

// soakCheck is the state of the pass over the cassette.
type soakCheck struct {
	seq      uint64
	c2s, s2c int
}

func driveFlood(t *testing.T, n int, _ io.WriteCloser, out *bufio.Reader, sample func(int)) {
	for i := 1; i <= n; i++ {
		line, err := out.ReadSlice('\n')
		if err != nil {
			t.Errorf("after %d of %d notifications: %v", i-1, n, err)
			return
		}
		if want := fmt.Sprintf(`"n":%d,`, i); !bytes.Contains(line, []byte(want)) {
			t.Errorf("notification %d: %.120s", i, line)
			return
		}
		sample(i)
	}
}

func checkFlood(m *store.Message, c *soakCheck) error {
	if m.Dir != store.S2C || !bytes.Contains(m.Frame, fmt.Appendf(nil, `"n":%d,`, m.Seq)) {
		return fmt.Errorf("seq %d: %s %.120s, want notification %d", m.Seq, m.Dir, m.Frame, m.Seq)
	}
	return nil
}

// echoRequest is the k-th request of the echo soak; bigServer answers it
// with id k (it numbers its answers) and the line's length.
func echoRequest(k int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`+"\n", k, strings.Repeat("q", 80))
}

func driveEcho(t *testing.T, n int, in io.WriteCloser, out *bufio.Reader, sample func(int)) {
	reqs := n / 2
	werr := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(in, 16<<10)
		for k := 1; k <= reqs; k++ {
			if _, err := bw.WriteString(echoRequest(k)); err != nil {
				werr <- err
				return
			}
		}
		werr <- bw.Flush()
	}()
	for k := 1; k <= reqs; k++ {
		line, err := out.ReadSlice('\n')
		if err != nil {
			t.Errorf("after %d of %d answers: %v", k-1, reqs, err)
			break
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"len":%d}}`, k, len(echoRequest(k)))
		if string(bytes.TrimSuffix(line, []byte("\n"))) != want {
			t.Errorf("answer %d: %.120s, want %s", k, line, want)
			break
		}
		sample(2 * k) // request k and answer k have passed
	}
	if err := <-werr; err != nil {
		t.Errorf("writing requests: %v", err)
	}
}

// checkEcho: requests in order 1, 2, …; answers in order 1, 2, …; each
// answer after its request (the proxy reads a request before the server
// can answer it).
func checkEcho(m *store.Message, c *soakCheck) error {
	s := jsonrpc.Classify(m.Frame)
	switch m.Dir {
	case store.C2S:
		c.c2s++
		if s.Kind != jsonrpc.Request || s.ID != strconv.Itoa(c.c2s) {
			return fmt.Errorf("seq %d: %.120s, want request %d", m.Seq, m.Frame, c.c2s)
		}
	case store.S2C:
		c.s2c++
		if s.Kind != jsonrpc.Response || s.ID != strconv.Itoa(c.s2c) {
			return fmt.Errorf("seq %d: %.120s, want answer %d", m.Seq, m.Frame, c.s2c)
		}
		if c.s2c > c.c2s {
			return fmt.Errorf("seq %d: answer %d recorded before its request", m.Seq, c.s2c)
		}
	}
	return nil
}
