package store

import (
	"slices"
	"testing"
	"time"
)

// Importing a HAR without mcpspy's seqs, an answer goes after its request
// and a server's question before the client's reply to it, however the
// answer or the reply writes the id: 1.0 answers 1, 7e0 replies to 7.
func TestOrderHARMessages_IDsCompareByValue(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	msg := func(entry int, ms int, dir Dir, frame string) harMessage {
		return harMessage{m: Message{Dir: dir, Time: t0.Add(time.Duration(ms) * time.Millisecond), Frame: []byte(frame)}, entry: entry}
	}
	msgs := []harMessage{
		msg(0, 10, C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`),
		msg(1, 5, S2C, `{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}}`), // spread early on its stream
		msg(2, 30, S2C, `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`),    // spread late on a GET stream
		msg(3, 20, C2S, `{"jsonrpc":"2.0","id":7e0,"result":{"roots":[]}}`),
	}
	orderHARMessages(msgs)
	var got []string
	for _, hm := range msgs {
		got = append(got, string(hm.m.Frame))
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":7e0,"result":{"roots":[]}}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n%q\nwant\n%q", got, want)
	}
}
