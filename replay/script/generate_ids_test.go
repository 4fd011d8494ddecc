package script

import "testing"

// export --script pairs by the id's value: a recorded answer with its
// request (an answer to "\u0031" written "1"), progress with the call that
// carried its token (2 written 2.0), and the client's reply with the
// server's question (5 written 5e0), whose action the answer is for.
func TestFromTape_IDsCompareByValue(t *testing.T) {
	_, out := generated(t, tapeOf(generateInfo,
		`> {"jsonrpc":"2.0","id":"\u0031","method":"tools/call","params":{"name":"echo","arguments":{"m":"a"},"_meta":{"progressToken":2}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2.0,"progress":1,"total":2}}`,
		`< {"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"echoed"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`,
		`> {"jsonrpc":"2.0","id":5e0,"result":{"action":"accept","content":{"ok":true}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"deployed"}]}}`,
	))
	scriptHas(t, out, "text: echoed", "progress: 1, total: 2", "when: {exact: {}, elicited: {action: accept}}")
}
