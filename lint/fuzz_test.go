package lint

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// FuzzSession feeds sessions of arbitrary frames (one per line, the first
// byte choosing the direction) to the checker: it must never panic, and
// every finding must name a rule and a message of the session. A first
// line "#http" or "#http1" makes the session a connection's share of
// sessionless Streamable HTTP traffic whose client messages carry a
// handshake-era MCP-Protocol-Version (all, or all but the first).
func FuzzSession(f *testing.F) {
	f.Add([]byte("#http1\n> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"))
	f.Add([]byte("#http\n" + strings.Join(opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`), "\n")))
	fuzzSession(f)
}

func fuzzSession(f *testing.F) {
	for _, l := range [][]string{
		opened(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x","outputSchema":{"type":"object","required":["a"]}}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text"}],"structuredContent":{"a":1}}}`),
		{`> [{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `< {"jsonrpc":"2.0","id":1,"result":{"nextCursor":"a"}}`},
		{`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		mrtr(`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}},"b":{"method":"roots/list"}}}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","requestState":"s","inputResponses":{"a":{"action":"accept","content":{"n":"x"}},"b":{"roots":[]}},"_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[],"resultType":"complete"}}`),
	} {
		f.Add([]byte(strings.Join(l, "\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []string
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) > 0 {
				lines = append(lines, string(l))
			}
		}
		var mode string
		if len(lines) > 0 && (lines[0] == "#http" || lines[0] == "#http1") {
			mode, lines = lines[0], lines[1:]
		}
		s := session(lines...)
		if mode != "" {
			withHTTP(s, func(m *store.Message) http.Header {
				if mode == "#http1" && m.Seq == 1 {
					return http.Header{}
				}
				return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
			}, func(*store.Message) (string, http.Header) {
				return "json", http.Header{"Content-Type": {"application/json"}}
			})
		}
		for _, fd := range Session(s, Options{}) {
			if !KnownRule(fd.Rule) || fd.Message == "" || fd.Seq > uint64(len(lines)) || fd.Related > uint64(len(lines)) {
				t.Fatalf("bad finding %+v for %d lines", fd, len(lines))
			}
		}
	})
}
