package store_test

import (
	"testing"

	"github.com/mcptape/mcptape/store"
)

func TestUnbatched(t *testing.T) {
	msg := func(seq uint64, dir store.Dir, frame string) *store.Message {
		return &store.Message{Session: "s1", Seq: seq, Dir: dir, Frame: []byte(frame), Note: "n"}
	}
	plain := []*store.Message{msg(1, store.C2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)}
	if got := store.Unbatched(plain); &got[0] != &plain[0] || len(got) != 1 {
		t.Errorf("no batch: got a new slice %v", got)
	}
	msgs := []*store.Message{
		msg(1, store.C2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		msg(2, store.C2S, ` [ {"jsonrpc":"2.0","id":2,"method":"ping"} , {"jsonrpc":"2.0","method":"n"} ] `),
		msg(3, store.S2C, `[{"jsonrpc":"2.0","id":2,"result":{}}]`),
		msg(4, store.C2S, `[]`),
		msg(5, store.C2S, `[{"jsonrpc":"2.0"`),
		msg(6, store.C2S, `[1,[]]`),
	}
	got := store.Unbatched(msgs)
	want := []struct {
		seq   uint64
		dir   store.Dir
		frame string
	}{
		{1, store.C2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{2, store.C2S, `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{2, store.C2S, `{"jsonrpc":"2.0","method":"n"}`},
		{3, store.S2C, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{4, store.C2S, `[]`},                // empty: an invalid request, kept
		{5, store.C2S, `[{"jsonrpc":"2.0"`}, // not JSON: kept
		{6, store.C2S, `1`},
		{6, store.C2S, `[]`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != w.seq || g.Dir != w.dir || string(g.Frame) != w.frame || g.Session != "s1" || g.Note != "n" {
			t.Errorf("message %d: got seq %d %v %s, want seq %d %v %s", i, g.Seq, g.Dir, g.Frame, w.seq, w.dir, w.frame)
		}
	}
	if string(msgs[1].Frame) != ` [ {"jsonrpc":"2.0","id":2,"method":"ping"} , {"jsonrpc":"2.0","method":"n"} ] ` {
		t.Errorf("the caller's batch message was altered: %s", msgs[1].Frame)
	}
}
