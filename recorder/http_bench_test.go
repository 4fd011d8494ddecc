package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPRoundTrip measures tools/call round trips per second over
// Streamable HTTP (go-sdk client and server, SSE answers) on four paths
// side by side in one run: straight to the server, through the mcpspy
// binary, through tcprelay (a hop that only copies bytes), through goproxy
// (Go's own httputil.ReverseProxy, recording nothing) and through
// taprelay (a byte relay that records from a copy, no HTTP stack on the
// forwarding path: the cheapest recording hop we know). The paths take
// turns in small chunks so that machine noise hits all alike, in an order
// that rotates: a path always run last in the round read a few percent
// faster in A/A runs.
//
// Set MCPTAPE_BENCH_BASE to another mcpspy binary (a build of the commit
// before a change) to run it as a sixth path beside the others:
// "vs-base" is then this mcpspy ÷ that one, measured on the same machine
// in the same minutes, which a change worth a few percent needs.
//
// Set MCPTAPE_BENCH_LEAN to the binary of an experimental hop (go build
// ./internal/peertest/leanrelay, or teerelay) to run it as a path too
// ("lean-ratio"); it must take -upstream and -o and announce itself as
// "NAME: listening on …", NAME being the binary's file name.
//
// It reports the target ratio, mcpspy ÷ direct (≥ 0.85), and beside it
// the relay's ratio: what any extra hop costs on this machine, the floor
// under mcpspy's own overhead. "vs-relay" is mcpspy ÷ relay, the part
// that is mcpspy's; "vs-goproxy" is mcpspy ÷ Go's reverse proxy (net/http's
// server and Transport, recording nothing; mcpspy has its own front). Also the p99 latency
// mcpspy adds, CPU per round trip of the hops and the server, and
// mcpspy's peak resident set (from /proc).
//
// The server, mcpspy and the relay run as processes of their own, as they
// are deployed. In one process with the go-sdk client and server, the
// proxy's share of the CPU went mostly to collecting the SDK's garbage
// (half a megabyte of decoder buffers per round trip).
//
//	go test -run '^$' -bench HTTPRoundTrip -benchtime 3000x ./recorder/
func BenchmarkHTTPRoundTrip(b *testing.B) {
	spy := peertest.Binary(b, "mcpspy")
	relay := peertest.BinaryPkg(b, "tcprelay", "./internal/peertest/tcprelay")
	server := peertest.BinaryPkg(b, "gosdkserver", "./internal/peertest/gosdkserver")
	goproxy := peertest.BinaryPkg(b, "goproxy", "./internal/peertest/goproxy")
	taprelay := peertest.BinaryPkg(b, "taprelay", "./internal/peertest/taprelay")
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			dir := b.TempDir()
			listening := func(p *peertest.Process, prefix string) string {
				return strings.TrimSuffix(strings.TrimSpace(p.WaitLine(b, prefix, 30*time.Second)), "/")
			}
			upProc := peertest.Start(b, dir, nil, nil, nil, server, "-http", "127.0.0.1:0")
			up := listening(upProc, "gosdkserver: listening on ")
			spyProc := peertest.Start(b, dir, nil, nil, nil, spy, "record", "-o", filepath.Join(dir, "bench.db"), "--listen", "127.0.0.1:0", "--upstream", up+"/mcp")
			relayProc := peertest.Start(b, dir, nil, nil, nil, relay, "-upstream", strings.TrimPrefix(up, "http://"))
			goproxyProc := peertest.Start(b, dir, nil, nil, nil, goproxy, "-upstream", up)
			tapProc := peertest.Start(b, dir, nil, nil, nil, taprelay, "-o", filepath.Join(dir, "tap.db"), "-upstream", strings.TrimPrefix(up, "http://"))
			ctx := context.Background()
			connect := func(base string) []*mcp.ClientSession {
				hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
				out := make([]*mcp.ClientSession, clients)
				for i := range out {
					c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
					cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { cs.Close() })
					out[i] = cs
				}
				return out
			}
			paths := []*benchPath{
				{sessions: connect(up)},
				{sessions: connect(listening(spyProc, "mcpspy: listening on ")), pid: spyProc.Cmd.Process.Pid},
				{sessions: connect(listening(relayProc, "tcprelay: listening on ")), pid: relayProc.Cmd.Process.Pid},
				{sessions: connect(listening(goproxyProc, "goproxy: listening on ")), pid: goproxyProc.Cmd.Process.Pid},
				{sessions: connect(listening(tapProc, "taprelay: listening on ")), pid: tapProc.Cmd.Process.Pid},
			}
			direct, proxied, relayed, stdlib, tapped := paths[0], paths[1], paths[2], paths[3], paths[4]
			var lean *benchPath
			if bin := os.Getenv("MCPTAPE_BENCH_LEAN"); bin != "" {
				leanProc := peertest.Start(b, dir, nil, nil, nil, bin, "-o", filepath.Join(dir, "lean.db"), "-upstream", strings.TrimPrefix(up, "http://"))
				lean = &benchPath{sessions: connect(listening(leanProc, filepath.Base(bin)+": listening on ")), pid: leanProc.Cmd.Process.Pid}
				paths = append(paths, lean)
			}
			var base *benchPath
			if bin := os.Getenv("MCPTAPE_BENCH_BASE"); bin != "" {
				baseProc := peertest.Start(b, dir, nil, nil, nil, bin, "record", "-o", filepath.Join(dir, "base.db"), "--listen", "127.0.0.1:0", "--upstream", up+"/mcp")
				base = &benchPath{sessions: connect(listening(baseProc, "mcpspy: listening on ")), pid: baseProc.Cmd.Process.Pid}
				paths = append(paths, base)
			}
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "benchmark payload"}}
			for _, p := range paths { // warm up
				p.run(b, params, 20*clients)
			}

			b.ResetTimer()
			serverCPU := processCPU(b, upProc.Cmd.Process.Pid)
			for _, p := range paths {
				p.elapsed, p.lat = 0, nil
				if p.pid != 0 {
					p.cpu = processCPU(b, p.pid)
				}
			}
			chunk := 50 * clients
			for round, done := 0, 0; done < b.N; round, done = round+1, done+chunk {
				// Each round starts one path later, so that no path
				// always runs right after the same other one.
				for i := range paths {
					paths[(round+i)%len(paths)].run(b, params, min(chunk, b.N-done))
				}
			}
			b.StopTimer()
			n := float64(b.N)
			perRT := func(d time.Duration, rts float64) float64 { return float64(d.Microseconds()) / rts }
			b.ReportMetric(perRT(processCPU(b, upProc.Cmd.Process.Pid)-serverCPU, float64(len(paths))*n), "server_cpu_µs/rt")
			b.ReportMetric(perRT(processCPU(b, proxied.pid)-proxied.cpu, n), "spy_cpu_µs/rt")
			b.ReportMetric(perRT(processCPU(b, relayed.pid)-relayed.cpu, n), "relay_cpu_µs/rt")
			b.ReportMetric(perRT(processCPU(b, stdlib.pid)-stdlib.cpu, n), "goproxy_cpu_µs/rt")
			b.ReportMetric(perRT(processCPU(b, tapped.pid)-tapped.cpu, n), "tap_cpu_µs/rt")
			b.ReportMetric(direct.rate(b.N), "direct_rt/s")
			b.ReportMetric(proxied.rate(b.N), "proxy_rt/s")
			b.ReportMetric(proxied.rate(b.N)/direct.rate(b.N), "ratio")
			b.ReportMetric(relayed.rate(b.N)/direct.rate(b.N), "relay-ratio")
			b.ReportMetric(proxied.rate(b.N)/relayed.rate(b.N), "vs-relay")
			b.ReportMetric(stdlib.rate(b.N)/direct.rate(b.N), "goproxy-ratio")
			b.ReportMetric(proxied.rate(b.N)/stdlib.rate(b.N), "vs-goproxy")
			b.ReportMetric(tapped.rate(b.N)/direct.rate(b.N), "tap-ratio")
			if base != nil {
				b.ReportMetric(perRT(processCPU(b, base.pid)-base.cpu, n), "base_cpu_µs/rt")
				b.ReportMetric(base.rate(b.N)/direct.rate(b.N), "base-ratio")
				b.ReportMetric(proxied.rate(b.N)/base.rate(b.N), "vs-base")
				if kb, ok := peertest.StatusKB(base.pid, "VmHWM"); ok {
					b.ReportMetric(float64(kb)/1024, "base_peak_rss_MiB")
				}
			}
			if lean != nil {
				b.ReportMetric(perRT(processCPU(b, lean.pid)-lean.cpu, n), "lean_cpu_µs/rt")
				b.ReportMetric(lean.rate(b.N)/direct.rate(b.N), "lean-ratio")
			}
			if kb, ok := peertest.StatusKB(proxied.pid, "VmHWM"); ok {
				b.ReportMetric(float64(kb)/1024, "spy_peak_rss_MiB")
			}
			p99d := p99(direct.lat)
			b.ReportMetric(float64(p99d.Microseconds()), "direct_p99_µs")
			b.ReportMetric(float64((p99(proxied.lat) - p99d).Microseconds()), "added_p99_µs")
		})
	}
}

// benchPath is one way to the server, with what its round trips took.
type benchPath struct {
	sessions []*mcp.ClientSession
	pid      int           // the hop's process, 0 when direct
	cpu      time.Duration // the hop's CPU time when the timer started
	elapsed  time.Duration
	lat      []time.Duration
}

func (p *benchPath) rate(n int) float64 { return float64(n) / p.elapsed.Seconds() }

// run makes n round trips spread over the sessions, adding the wall time
// and every call's latency.
func (p *benchPath) run(b *testing.B, params *mcp.CallToolParams, n int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i, cs := range p.sessions {
		share := n / len(p.sessions)
		if i < n%len(p.sessions) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, share)
			for range share {
				t0 := time.Now()
				if _, err := cs.CallTool(context.Background(), params); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			p.lat = append(p.lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	p.elapsed += time.Since(start)
}

func p99(l []time.Duration) time.Duration {
	if len(l) == 0 {
		return 0
	}
	slices.Sort(l)
	return l[(len(l)*99)/100]
}

// processCPU is the user and system CPU time a process has used so far,
// from /proc (Linux), in clock ticks of 10 ms: coarse, so measure over
// thousands of round trips.
func processCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatalf("read CPU time: %v", err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
