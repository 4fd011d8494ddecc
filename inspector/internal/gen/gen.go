// Package gen writes big synthetic cassettes for the inspector's
// benchmarks: realistic MCP traffic (handshake, tool calls with progress,
// errors, isError results, notifications) with timestamps that make
// latencies spread. It is deterministic for a given size.
package gen

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mcptape/mcptape/store"
)

// Version names the generator's output; change it when the traffic
// changes, so cached files are rebuilt.
const Version = "v1"

var tools = []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation", "search", "fetch"}

// Cassette writes n messages into a new cassette at path, spread over
// sessions of at most perSession messages (each imported in one
// transaction, which bounds memory).
func Cassette(path string, n, perSession int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	for s := 1; n > 0; s++ {
		k := min(n, perSession)
		n -= k
		sess := session(rng, fmt.Sprintf("s%d", s), start.Add(time.Duration(s)*time.Minute), k)
		if _, err := store.Import(path, &store.Tape{Sessions: []store.TapeSession{sess}}); err != nil {
			return fmt.Errorf("generate %s: %w", path, err)
		}
	}
	return nil
}

func session(rng *rand.Rand, id string, t time.Time, n int) store.TapeSession {
	ts := store.TapeSession{Info: store.SessionInfo{
		ID: id, Transport: store.TransportStdio, Upstream: "npx @modelcontextprotocol/server-everything stdio", Start: t,
		Handshake: store.Handshake{Method: "initialize", ProtocolVersion: "2025-11-25", ServerInfo: []byte(`{"name":"mcp-servers/everything","version":"2026.8.31"}`)},
	}}
	add := func(dir store.Dir, frame string) {
		t = t.Add(time.Duration(rng.IntN(2000)+50) * time.Microsecond)
		ts.Messages = append(ts.Messages, &store.Message{Session: id, Seq: uint64(len(ts.Messages) + 1), Dir: dir, Time: t, Frame: []byte(frame)})
	}
	add(store.C2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`)
	add(store.S2C, `{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"mcp-servers/everything","version":"2026.8.31"}},"jsonrpc":"2.0","id":0}`)
	add(store.C2S, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for id := 1; len(ts.Messages) < n; id++ {
		tool := tools[rng.IntN(len(tools))]
		add(store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"message":"request number %d","a":%d,"b":%d},"_meta":{"progressToken":%d}}}`, id, tool, id, rng.IntN(100), rng.IntN(100), id))
		if rng.IntN(4) == 0 && len(ts.Messages) < n {
			add(store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":1,"total":2}}`, id))
		}
		if len(ts.Messages) >= n {
			break
		}
		// Latency: mostly fast, with a slow tail.
		lat := time.Duration(rng.ExpFloat64()*float64(20*time.Millisecond)) + time.Millisecond
		t = t.Add(lat)
		switch r := rng.IntN(50); {
		case r == 0:
			add(store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"Unknown tool: %s"}}`, id, tool))
		case r < 3:
			add(store.S2C, fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"failed: request number %d"}],"isError":true},"jsonrpc":"2.0","id":%d}`, id, id))
		default:
			add(store.S2C, fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"Echo: request number %d from %s"}]},"jsonrpc":"2.0","id":%d}`, id, tool, id))
		}
	}
	return ts
}
