package replay_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// Benchmarks report ratios measured side by side in one run, so that the
// machine's speed cancels out:
//
//	go test ./replay -run '^$' -bench . -benchtime 2000x

// minimalServer is a Go SDK server with one trivial tool.
func minimalServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "minimal", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "noop", Description: "does nothing"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	return s
}

// teeRecorder records the frames of an in-process stdio session into a
// tape, in the order the peers read them.
type teeRecorder struct {
	mu   sync.Mutex
	sess store.TapeSession
}

func (r *teeRecorder) tee(src io.Reader, dir store.Dir) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(src)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			r.mu.Lock()
			r.sess.Messages = append(r.sess.Messages, &store.Message{
				Session: "s1", Seq: uint64(len(r.sess.Messages) + 1), Dir: dir, Time: time.Now(), Frame: line,
			})
			r.mu.Unlock()
			if _, err := pw.Write(append(line, '\n')); err != nil {
				break
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// recordMinimal records one Go SDK client session calling noop against
// minimalServer, in process.
func recordMinimal(tb testing.TB) *store.Tape {
	tb.Helper()
	rec := &teeRecorder{sess: store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}}
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx := context.Background()
	ss, err := minimalServer().Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(rec.tee(c2sR, store.C2S)), Writer: s2cW}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := goClient().Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(rec.tee(s2cR, store.S2C)), Writer: c2sW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, noopCall); err != nil {
		tb.Fatal(err)
	}
	cs.Close()
	ss.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return &store.Tape{Sessions: []store.TapeSession{rec.sess}}
}

var noopCall = &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}}

func goClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
}

// connectStdio connects a Go SDK client to a server over in-process pipes.
func connectStdio(b *testing.B, serve func(r io.ReadCloser, w io.WriteCloser)) *mcp.ClientSession {
	b.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	go serve(c2sR, s2cW)
	cs, err := goClient().Connect(context.Background(), &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func callLoop(b *testing.B, cs *mcp.ClientSession, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	for range n {
		if _, err := cs.CallTool(ctx, noopCall); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

func mockServer(b *testing.B, tape *store.Tape) *replay.Server {
	b.Helper()
	c, err := replay.NewCassette("bench.db", tape)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := replay.NewServer([]replay.Source{c}, replay.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkToolsCall_VsGoSDK: tools/call round trips per second against
// mcpmock and against a minimal Go SDK server, same client, same
// transport. The metric "x-gosdk" is mcpmock's rate over the Go SDK's.
func BenchmarkToolsCall_VsGoSDK(b *testing.B) {
	tape := recordMinimal(b)
	b.Run("stdio", func(b *testing.B) {
		srv := mockServer(b, tape)
		mock := connectStdio(b, func(r io.ReadCloser, w io.WriteCloser) { _ = srv.ServeStdio(context.Background(), r, w); w.Close() })
		real := connectStdio(b, func(r io.ReadCloser, w io.WriteCloser) {
			_ = minimalServer().Run(context.Background(), &mcp.IOTransport{Reader: r, Writer: w})
		})
		reportRatio(b, mock, real)
	})
	b.Run("http", func(b *testing.B) {
		srv := mockServer(b, tape)
		mh := httptest.NewServer(srv.Handler())
		b.Cleanup(mh.Close)
		gh := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return minimalServer() }, nil))
		b.Cleanup(gh.Close)
		mock := connectHTTP(b, mh.URL+"/mcp")
		real := connectHTTP(b, gh.URL)
		reportRatio(b, mock, real)
	})
}

func connectHTTP(b *testing.B, url string) *mcp.ClientSession {
	b.Helper()
	cs, err := goClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// reportRatio alternates rounds against both servers, so that both see the
// same machine conditions.
func reportRatio(b *testing.B, mock, real *mcp.ClientSession) {
	b.Helper()
	callLoop(b, mock, 50) // warm up
	callLoop(b, real, 50)
	b.ResetTimer()
	var tm, tr time.Duration
	for done := 0; done < b.N; {
		n := min(200, b.N-done)
		tm += callLoop(b, mock, n)
		tr += callLoop(b, real, n)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/tm.Seconds(), "mock-calls/s")
	b.ReportMetric(float64(b.N)/tr.Seconds(), "gosdk-calls/s")
	b.ReportMetric(tr.Seconds()/tm.Seconds(), "x-gosdk")
}

// argBase offsets the argument that tells requests apart, so that every
// request and answer has the same length whatever the cassette's size: the
// 10-interaction cassette must not win on shorter numbers.
const argBase = 100_000

// bigTape is a cassette with n distinct tools/call interactions.
func bigTape(n int) *store.Tape {
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio, Start: time.Unix(0, 0)}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	add := func(dir store.Dir, frame string) {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: dir, Time: t0.Add(time.Duration(len(s.Messages)) * time.Microsecond), Frame: []byte(frame)})
	}
	add(store.C2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	add(store.S2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
	for i := range n {
		add(store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"i":%d,"text":"some words to make the request realistic"}}}`, i+1, argBase+i))
		add(store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"answer %d"}]}}`, i+1, argBase+i))
	}
	return &store.Tape{Sessions: []store.TapeSession{s}}
}

// rawClient sends lines and reads answers on an in-process stdio session,
// so the engine's own cost is what is measured.
type rawClient struct {
	w  io.Writer
	sc *bufio.Scanner
}

func startRaw(b *testing.B, srv *replay.Server) *rawClient {
	b.Helper()
	c, stop := startRawStop(srv)
	b.Cleanup(stop)
	return c
}

// startRawStop is startRaw with the stop left to the caller.
func startRawStop(srv *replay.Server) (*rawClient, func()) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.ServeStdio(ctx, c2sR, s2cW); s2cW.Close(); close(done) }()
	sc := bufio.NewScanner(s2cR)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &rawClient{w: c2sW, sc: sc}, func() { cancel(); c2sW.Close(); s2cR.Close(); <-done }
}

// call asks for bigTape's i-th interaction.
func (c *rawClient) call(b *testing.B, id, i int) {
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"arguments":{"text":"some words to make the request realistic","i":%d},"name":"echo"}}`+"\n", id, argBase+i)
	if !c.sc.Scan() {
		b.Fatal("session ended")
	}
	if !strings.Contains(c.sc.Text(), `"result"`) {
		b.Fatalf("unexpected answer %s", c.sc.Text())
	}
}

// BenchmarkThroughput_100kVs10: round trips against a 100k-interaction
// cassette and a 10-interaction one, alternating; "x-small" near 1 means
// matching does not scan. Both sides get the same client, the same bytes
// per request and answer, and ask their recorded requests in recorded
// order, each recorded once (the small side cycles through its ten: a
// request recorded once is answered the same way every time).
//
// In recorded order the engine's guess (the entry after the last match)
// spares the hash probe; "x-small-shuffled" asks the big cassette's
// requests in a scattered order, so every one goes through the index.
func BenchmarkThroughput_100kVs10(b *testing.B) {
	const big = 100_000
	small := startRaw(b, mockServer(b, bigTape(10)))
	large := startRaw(b, mockServer(b, bigTape(big)))
	b.ResetTimer()
	var ts, tl, th, tx time.Duration
	for done := 0; done < b.N; {
		n := min(500, b.N-done)
		start := time.Now()
		for k := range n {
			small.call(b, done+k, (done+k)%10)
		}
		ts += time.Since(start)
		start = time.Now()
		for k := range n {
			large.call(b, done+k, (done+k)%big) // in recorded order, as a replay goes
		}
		tl += time.Since(start)
		start = time.Now()
		for k := range n {
			large.call(b, done+k, (done+k)%10) // the small one's ten requests
		}
		th += time.Since(start)
		start = time.Now()
		for k := range n {
			// 7919 is prime to 100k: a permutation that defeats the guess.
			large.call(b, done+k, (done+k)*7919%big)
		}
		tx += time.Since(start)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/ts.Seconds(), "calls/s-10")
	b.ReportMetric(float64(b.N)/tl.Seconds(), "calls/s-100k")
	b.ReportMetric(ts.Seconds()/tl.Seconds(), "x-small")
	// Same ten requests against the big index: what the index's size
	// costs, apart from the memory of 100k different answers.
	b.ReportMetric(ts.Seconds()/th.Seconds(), "x-small-same-requests")
	b.ReportMetric(ts.Seconds()/tx.Seconds(), "x-small-shuffled")
}

// BenchmarkFirstAnswer_100k: from opening a 100k-interaction cassette file
// to the first answer on stdio. cpu-ms/first-answer is the CPU time that
// took, on every core: on a shared machine, the wall time depends on what
// else runs.
func BenchmarkFirstAnswer_100k(b *testing.B) {
	for _, ext := range []string{"db", "jsonl"} {
		b.Run(ext, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "big."+ext)
			writeTape(b, path, bigTape(100_000))
			b.ResetTimer()
			var total, cpu time.Duration
			cpuOK := true
			for range b.N {
				start := time.Now()
				cpuStart, ok := processCPU()
				cpuOK = cpuOK && ok
				c, err := replay.LoadCassette(path)
				if err != nil {
					b.Fatal(err)
				}
				srv, err := replay.NewServer([]replay.Source{c}, replay.Options{})
				if err != nil {
					b.Fatal(err)
				}
				client, stop := startRawStop(srv)
				client.call(b, 1, 99_999)
				total += time.Since(start)
				cpuEnd, _ := processCPU()
				cpu += cpuEnd - cpuStart
				stop() // and let this cassette go before the next round
				srv.Close()
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-answer")
			if cpuOK {
				b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/first-answer")
			}
		})
	}
}

func writeTape(b *testing.B, path string, t *store.Tape) {
	b.Helper()
	if strings.HasSuffix(path, ".jsonl") {
		var sb strings.Builder
		if err := store.WriteJSONL(&sb, t); err != nil {
			b.Fatal(err)
		}
		if err := writeFile(path, sb.String()); err != nil {
			b.Fatal(err)
		}
		return
	}
	if _, err := store.Import(path, t); err != nil {
		b.Fatal(err)
	}
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }
