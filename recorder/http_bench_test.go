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
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPRoundTrip measures tools/call round trips per second over
// Streamable HTTP (go-sdk client and server, SSE answers), straight to the
// server and through the mcpspy binary, side by side in one run: the two
// paths take turns in small chunks so that machine noise hits both alike.
// It reports both rates, their ratio (target ≥ 0.85) and the p99 latency
// the proxy adds.
//
// The server and mcpspy run as processes of their own, as they are
// deployed. In one process with the go-sdk client and server, the proxy's
// share of the CPU went mostly to collecting the SDK's garbage (half a
// megabyte of decoder buffers per round trip), which mcpspy never pays.
//
//	go test -run '^$' -bench HTTPRoundTrip -benchtime 3000x ./recorder/
func BenchmarkHTTPRoundTrip(b *testing.B) {
	spy := peertest.Binary(b, "mcpspy")
	server := peertest.BinaryPkg(b, "gosdkserver", "./internal/peertest/gosdkserver")
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			dir := b.TempDir()
			upProc := peertest.Start(b, dir, nil, nil, nil, server, "-http", "127.0.0.1:0")
			up := strings.TrimSuffix(strings.TrimSpace(upProc.WaitLine(b, "gosdkserver: listening on ", 30*time.Second)), "/")
			spyProc := peertest.Start(b, dir, nil, nil, nil, spy, "record", "-o", filepath.Join(dir, "bench.db"), "--listen", "127.0.0.1:0", "--upstream", up+"/mcp")
			px := struct{ URL string }{strings.TrimSpace(spyProc.WaitLine(b, "mcpspy: listening on ", 30*time.Second))}
			ctx := context.Background()
			connect := func(endpoint string) []*mcp.ClientSession {
				hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
				out := make([]*mcp.ClientSession, clients)
				for i := range out {
					c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
					cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { cs.Close() })
					out[i] = cs
				}
				return out
			}
			direct, proxied := connect(up+"/mcp"), connect(px.URL+"/mcp")
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "benchmark payload"}}

			// run makes n round trips spread over the sessions and returns
			// the wall time and every call's latency.
			run := func(sessions []*mcp.ClientSession, n int) (time.Duration, []time.Duration) {
				var mu sync.Mutex
				var lat []time.Duration
				var wg sync.WaitGroup
				start := time.Now()
				for i, cs := range sessions {
					share := n / len(sessions)
					if i < n%len(sessions) {
						share++
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						mine := make([]time.Duration, 0, share)
						for range share {
							t0 := time.Now()
							if _, err := cs.CallTool(ctx, params); err != nil {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(t0))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				return time.Since(start), lat
			}
			run(direct, 20*clients) // warm up both paths
			run(proxied, 20*clients)

			b.ResetTimer()
			spyCPU, upCPU := processCPU(b, spyProc.Cmd.Process.Pid), processCPU(b, upProc.Cmd.Process.Pid)
			var tDirect, tProxy, cDirect, cProxy time.Duration
			var lDirect, lProxy []time.Duration
			chunk := 50 * clients
			for done := 0; done < b.N; done += chunk {
				n := min(chunk, b.N-done)
				c0 := selfCPU()
				d, l := run(direct, n)
				c1 := selfCPU()
				cDirect += c1 - c0
				tDirect += d
				lDirect = append(lDirect, l...)
				d, l = run(proxied, n)
				cProxy += selfCPU() - c1
				tProxy += d
				lProxy = append(lProxy, l...)
			}
			b.StopTimer()
			spyCPU = processCPU(b, spyProc.Cmd.Process.Pid) - spyCPU
			upCPU = processCPU(b, upProc.Cmd.Process.Pid) - upCPU
			// CPU per round trip: mcpspy's, the server's (which served both
			// paths, so twice b.N) and the clients' on each path. On two
			// cores the ratio follows (client+server) ÷ (client+server+mcpspy).
			b.ReportMetric(float64(spyCPU.Microseconds())/float64(b.N), "spy_cpu_µs/rt")
			b.ReportMetric(float64(upCPU.Microseconds())/float64(2*b.N), "server_cpu_µs/rt")
			b.ReportMetric(float64(cDirect.Microseconds())/float64(b.N), "client_direct_cpu_µs/rt")
			b.ReportMetric(float64(cProxy.Microseconds())/float64(b.N), "client_proxied_cpu_µs/rt")
			rDirect := float64(b.N) / tDirect.Seconds()
			rProxy := float64(b.N) / tProxy.Seconds()
			b.ReportMetric(rDirect, "direct_rt/s")
			b.ReportMetric(rProxy, "proxy_rt/s")
			b.ReportMetric(rProxy/rDirect, "ratio")
			p99d, p99p := p99(lDirect), p99(lProxy)
			b.ReportMetric(float64(p99d.Microseconds()), "direct_p99_µs")
			b.ReportMetric(float64((p99p - p99d).Microseconds()), "added_p99_µs")
		})
	}
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

// selfCPU is the CPU time this process (the clients) has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
