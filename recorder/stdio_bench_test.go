package recorder_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdio_ToolsCall: tools/call round trips, go-sdk client and
// go-sdk server over stdio, direct, through mcpspy and through piperelay
// (a process that only copies bytes), interleaved call by call in one run
// so that all see the same machine. Reports each rate, proxied/direct
// (target ≥ 0.9), and relay/direct: what any process in the middle costs
// here, the floor under mcpspy's own overhead.
//
// Set MCPTAPE_BENCH_BASE to another mcpspy binary (a build of the commit
// before a change) to call through it too, in the same rounds:
// "vs-base" is then this mcpspy ÷ that one.
func BenchmarkStdio_ToolsCall(b *testing.B) {
	spy := peertest.Binary(b, "mcpspy")
	server := peertest.BinaryPkg(b, "gosdkserver", "./internal/peertest/gosdkserver")
	relay := peertest.BinaryPkg(b, "piperelay", "./internal/peertest/piperelay")
	db := filepath.Join(b.TempDir(), "bench.db")
	ctx := context.Background()
	connect := func(cmd *exec.Cmd) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	direct := connect(exec.Command(server))
	proxied := connect(exec.Command(spy, "record", "-o", db, "--", server))
	relayed := connect(exec.Command(relay, server))
	var base *mcp.ClientSession
	if bin := os.Getenv("MCPTAPE_BENCH_BASE"); bin != "" {
		base = connect(exec.Command(bin, "record", "-o", filepath.Join(b.TempDir(), "base.db"), "--", server))
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}}
	call := func(cs *mcp.ClientSession) time.Duration {
		t0 := time.Now()
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for range 50 { // warm all paths
		call(direct)
		call(proxied)
		call(relayed)
		if base != nil {
			call(base)
		}
	}
	// Each round starts one path later: the path called last in every
	// round read a few percent faster in A/A runs.
	paths := []*stdioPath{{cs: direct}, {cs: proxied}, {cs: relayed}}
	if base != nil {
		paths = append(paths, &stdioPath{cs: base})
	}
	for round := 0; b.Loop(); round++ {
		for i := range paths {
			p := paths[(round+i)%len(paths)]
			p.took += call(p.cs)
		}
	}
	dt, pt, rt := paths[0].took, paths[1].took, paths[2].took
	n := float64(b.N)
	b.ReportMetric(n/dt.Seconds(), "direct-calls/s")
	b.ReportMetric(n/pt.Seconds(), "proxied-calls/s")
	b.ReportMetric(dt.Seconds()/pt.Seconds(), "proxied/direct")
	b.ReportMetric(dt.Seconds()/rt.Seconds(), "relay/direct")
	if base != nil {
		b.ReportMetric(paths[3].took.Seconds()/pt.Seconds(), "vs-base")
	}
}

// stdioPath is one client's way to the server and the time its calls took.
type stdioPath struct {
	cs   *mcp.ClientSession
	took time.Duration
}
