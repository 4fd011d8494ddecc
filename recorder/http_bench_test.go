package recorder_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPRoundTrip measures tools/call round trips per second over
// Streamable HTTP (go-sdk client and server, SSE answers), straight to the
// server and through the recording proxy, side by side in one run: the two
// paths take turns in small chunks so that machine noise hits both alike.
// It reports both rates, their ratio (target ≥ 0.85) and the p99 latency
// the proxy adds.
//
//	go test -run '^$' -bench HTTPRoundTrip -benchtime 3000x ./recorder/
func BenchmarkHTTPRoundTrip(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			srv := goSDKServer()
			up := serveHTTP(b, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			px := startHTTPProxy(b, up+"/mcp")
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
			var tDirect, tProxy time.Duration
			var lDirect, lProxy []time.Duration
			chunk := 50 * clients
			for done := 0; done < b.N; done += chunk {
				n := min(chunk, b.N-done)
				d, l := run(direct, n)
				tDirect += d
				lDirect = append(lDirect, l...)
				d, l = run(proxied, n)
				tProxy += d
				lProxy = append(lProxy, l...)
			}
			b.StopTimer()
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
