package mocktest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

const cassette = `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"2.0"}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}}
{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-21T10:00:00.004000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"snow"}]}}}
`

// writeCassette puts the example cassette in a file, as mcpspy would have.
func writeCassette() (path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "mocktest-example-")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "weather.jsonl")
	if err := os.WriteFile(path, []byte(cassette), 0o600); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Load(path); err != nil {
		log.Fatal(err)
	}
	return path, func() { os.RemoveAll(dir) }
}

// A Go SDK client talks to a replayed cassette in process. (The client
// probes server/discover first; the mock answers -32601 and the client
// falls back to initialize, as with a real handshake-era server.) In a
// test, use mocktest.NewFromCassette(t, path) and srv.AssertAllUsed().
func ExampleServer_Transport() {
	srv, stop := startWeather()
	defer stop()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, srv.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil {
		log.Fatal(err)
	}
	cs.Close()
	fmt.Println(cs.InitializeResult().ServerInfo.Name, res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("all used:", srv.Check() == nil)
	// Output:
	// weather snow
	// all used: true
}

// The same cassette over Streamable HTTP, for clients that take a URL.
func ExampleServer_URL() {
	srv, stop := startWeather()
	defer stop()
	url := srv.URL()
	fmt.Println(strings.HasPrefix(url, "http://127.0.0.1:"), strings.HasSuffix(url, "/mcp"))

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// true true
	// snow
}

// What the host under test sent, checked after the fact, as WireMock's
// verify does: every message in arrival order, or one tool's arguments.
// The Go SDK client probes server/discover before falling back to
// initialize.
func ExampleServer_ToolCalls() {
	srv, stop := startWeather()
	defer stop()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo"}}); err != nil {
		log.Fatal(err)
	}
	cs.Close()
	for _, r := range srv.Received() {
		fmt.Println(r.Session, r.Method)
	}
	for _, args := range srv.ToolCalls("forecast") {
		fmt.Println("forecast", string(args))
	}
	// Output:
	// 1 server/discover
	// 1 initialize
	// 1 notifications/initialized
	// 1 tools/call
	// forecast {"city":"Oslo"}
}

// A request nothing recorded answers gets a JSON-RPC error naming the
// nearest recorded request and how it differs; Check (in a test,
// AssertNoUnmatched or AssertAllUsed) reports it again at the end, for a
// host that swallowed the error.
func ExampleServer_Check() {
	srv, stop := startWeather()
	defer stop()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Bergen"}})
	fmt.Println("host got:", err)
	fmt.Println("check:", srv.Check())
	// Output:
	// host got: calling "tools/call": mcpmock: no recorded answer for tools/call; nearest recorded request: weather.jsonl s1#4 tools/call {"arguments":{"city":"Oslo"},"name":"forecast"}
	// - params.arguments.city="Oslo"
	// + params.arguments.city="Bergen"
	// check: unmatched tools/call {"arguments":{"city":"Bergen"},"name":"forecast"}; nearest: weather.jsonl s1#4 tools/call {"arguments":{"city":"Oslo"},"name":"forecast"}
	// - params.arguments.city="Oslo"
	// + params.arguments.city="Bergen"
	// recorded but never used: weather.jsonl s1#4 tools/call {"arguments":{"city":"Oslo"},"name":"forecast"}
}

// One server shared by the tests of a suite (started in TestMain): Reset
// between tests gives each a journal and a report of its own.
func ExampleServer_Reset() {
	srv, stop := startWeather()
	defer stop()

	ctx := context.Background()
	for _, city := range []string{"Bergen", "Oslo"} { // two tests, one after the other
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
		if err != nil {
			log.Fatal(err)
		}
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": city}})
		cs.Close()
		fmt.Printf("test asking for %s: %d forecast call, check passes: %v\n", city, len(srv.ToolCalls("forecast")), srv.Check() == nil)
		srv.Reset()
	}
	// Output:
	// test asking for Bergen: 1 forecast call, check passes: false
	// test asking for Oslo: 1 forecast call, check passes: true
}

// Pipes serves one stdio session for a host that speaks raw JSON-RPC
// lines, as it would to a server it spawned: write a request, read the
// answer, with the host's own id.
func ExampleServer_Pipes() {
	srv, stop := startWeather()
	defer stop()

	in, out := srv.Pipes()
	defer in.Close()
	answers := bufio.NewScanner(out)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}`,
	} {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			log.Fatal(err)
		}
		if strings.Contains(line, `"id"`) && answers.Scan() { // a notification gets no answer
			fmt.Println(answers.Text())
		}
	}
	// Output:
	// {"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"2.0"}}}
	// {"jsonrpc":"2.0","id":"b","result":{"content":[{"type":"text","text":"snow"}]}}
}

// startWeather serves the example cassette, as mocktest.NewFromCassette
// does in a test; stop closes the server and removes the file.
func startWeather(opts ...mocktest.Option) (srv *mocktest.Server, stop func()) {
	path, cleanup := writeCassette()
	c, err := replay.LoadCassette(path)
	if err != nil {
		log.Fatal(err)
	}
	srv, err = mocktest.Start([]replay.Source{c}, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return srv, func() { srv.Close(); cleanup() }
}

// A host that writes the city as its user typed it ("OSLO") still gets
// the answer recorded for "Oslo": the matcher, asked only when no
// recorded request is the same, compares the city without case.
func ExampleWithMatcher() {
	cityAnyCase := func(live, recorded replay.MatchRequest) bool {
		type call struct {
			Name      string
			Arguments struct{ City string }
		}
		var l, r call
		if json.Unmarshal(live.Params, &l) != nil || json.Unmarshal(recorded.Params, &r) != nil {
			return false
		}
		return l.Name == r.Name && strings.EqualFold(l.Arguments.City, r.Arguments.City)
	}
	srv, stop := startWeather(mocktest.WithMatcher(cityAnyCase))
	defer stop()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "OSLO"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("all used:", srv.Check() == nil)
	// Output:
	// snow
	// all used: true
}
