package replay_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// exampleJSONL is a small cassette as mcpspy export writes it.
const exampleJSONL = `{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"2.0"}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}}
{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-21T10:00:00.004000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"snow"}]}}}
`

func exampleCassette() *replay.Cassette {
	tape, err := store.ReadJSONL(strings.NewReader(exampleJSONL), "example.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	c, err := replay.NewCassette("example.jsonl", tape)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// A cassette served on stdio: ids are the live ones, params match whatever
// their key order, and a request nothing recorded gets an error naming the
// nearest recorded one.
func ExampleServer_ServeStdio() {
	srv, err := replay.NewServer([]replay.Source{exampleCassette()}, replay.Options{Log: io.Discard})
	if err != nil {
		log.Fatal(err)
	}
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{"city":"Oslo"},"name":"forecast"}}`,
		`{"jsonrpc":"2.0","id":"b","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"forecast","arguments":{"city":"Rome"}}}`,
	}, "\n") + "\n"
	var out strings.Builder
	if err := srv.ServeStdio(context.Background(), strings.NewReader(requests), &out); err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 120 {
			line = line[:120] + "…"
		}
		fmt.Println(line)
	}
	r := srv.Report()
	fmt.Printf("matched %d, unmatched %d, unused %v\n", r.Matched, len(r.Unmatched), r.Unused)
	// Output:
	// {"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"snow"}]}}
	// {"jsonrpc":"2.0","id":"b","result":{}}
	// {"jsonrpc":"2.0","id":"c","error":{"code":-32602,"message":"mcpmock: no recorded answer for tools/call; nearest recorded…
	// matched 1, unmatched 1, unused [example.jsonl s1#1 initialize]
}

// Warnings go to Options.Log: here, an unmatched request.
func ExampleOptions_log() {
	srv, _ := replay.NewServer([]replay.Source{exampleCassette()}, replay.Options{Log: os.Stdout})
	_ = srv.ServeStdio(context.Background(),
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Rome"}}}`+"\n"),
		io.Discard)
	// Output:
	// mcpmock: unmatched tools/call {"arguments":{"city":"Rome"},"name":"forecast"}
	//   nearest: example.jsonl s1#4 tools/call {"arguments":{"city":"Oslo"},"name":"forecast"}
	//   - params.arguments.city="Oslo"
	//   + params.arguments.city="Rome"
}
