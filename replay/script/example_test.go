package script_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// FromTape writes what a recorded server did as a script to edit: here
// a server of protocol 2025-11-25 with one tool, called twice with other
// arguments.
func ExampleFromTape() {
	frames := []struct {
		dir   store.Dir
		frame string
	}{
		{store.C2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1.0.0"}}}`},
		{store.S2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1.0.0"}}}`},
		{store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"forecast","inputSchema":{"type":"object"}}]}}`},
		{store.C2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Paris"}}}`},
		{store.S2C, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Sunny"}]}}`},
		{store.C2S, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}`},
		{store.S2C, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"no data for Oslo"}}`},
	}
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Handshake: store.Handshake{ServerInfo: []byte(`{"name":"weather","version":"1.0.0"}`)}}}
	for i, f := range frames {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: f.dir, Time: time.Unix(0, 0), Frame: []byte(f.frame)})
	}
	out, err := script.FromTape(&store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// # A mcpmock script made by mcpspy from session s1.
	// # It answers as the recorded server did; edit it freely (docs/SCRIPTS.md).
	// server:
	//   name: weather
	//   version: 1.0.0
	//   protocolVersions: ["2025-11-25"]
	// tools:
	//   - name: forecast
	//     inputSchema:
	//       type: object
	//     answers:
	//       - when: {exact: {city: Paris}}
	//         text: Sunny
	//       - when: {exact: {city: Oslo}}
	//         error:
	//           code: -32603
	//           message: no data for Oslo
}

// Parse compiles a script held in the test itself, a fake server for a
// host to call: the YAML of README.md's "Fake a server: scripts", served
// by package mocktest to a Go SDK client. In a test, pass the script to
// mocktest.New(t, []replay.Source{s}), or keep it in a file and use
// mocktest.Load(t, "weather.yaml").
func ExampleParse() {
	s, err := script.Parse("weather.yaml", []byte(`
server: {name: weather, version: 1.0.0}
tools:
  - name: forecast
    inputSchema: {type: object, properties: {city: {type: string}}, required: [city]}
    answers:
      - when: {exact: {city: Atlantis}}
        error: {code: -32602, message: "unknown city"}
      - text: "Sunny in {{.args.city}}"
`))
	if err != nil {
		log.Fatal(err) // file:line: field: what is wrong, for each problem
	}
	srv, err := mocktest.Start([]replay.Source{s})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for _, city := range []string{"Paris", "Atlantis"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": city}})
		if err != nil {
			fmt.Println(city+":", err)
			continue
		}
		fmt.Println(city+":", res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// Paris: Sunny in Paris
	// Atlantis: calling "tools/call": unknown city
}
