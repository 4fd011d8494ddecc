package lint

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzSession feeds sessions of arbitrary frames (one per line, the first
// byte choosing the direction) to the checker: it must never panic, and
// every finding must name a rule and a message of the session.
func FuzzSession(f *testing.F) {
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
		s := session(lines...)
		for _, fd := range Session(s, Options{}) {
			if !KnownRule(fd.Rule) || fd.Message == "" || fd.Seq > uint64(len(lines)) || fd.Related > uint64(len(lines)) {
				t.Fatalf("bad finding %+v for %d lines", fd, len(lines))
			}
		}
	})
}
