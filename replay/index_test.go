package replay

import (
	"fmt"
	"hash/maphash"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// TestKeyIndex_FindNext: a guess only saves work; right or wrong, the
// answer is find's.
func TestKeyIndex_FindNext(t *testing.T) {
	x := newKeyIndex(maphash.MakeSeed(), 0)
	keys := []string{"m\x00{\"a\":1}", "m\x00{\"a\":2}", "m\x00{\"b\":22}", "n\x00"}
	for i, k := range keys {
		x.add(x.hash([]byte(k)), []byte(k), &interaction{seq: uint64(i)})
	}
	tests := []struct {
		name  string
		key   string
		guess uint32
		want  int // entry number, -1 for none
	}{
		{name: "right guess", key: keys[1], guess: 1, want: 1},
		{name: "guess of another key of the same length", key: keys[1], guess: 0, want: 1},
		{name: "guess of a longer key", key: keys[0], guess: 2, want: 0},
		{name: "guess past the end", key: keys[3], guess: 4, want: 3},
		{name: "guess far past the end", key: keys[2], guess: 1 << 31, want: 2},
		{name: "absent key", key: "m\x00{\"a\":3}", guess: 0, want: -1},
		{name: "absent key, guess past the end", key: "x\x00", guess: 4, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, n := x.findNext([]byte(tt.key), tt.guess)
			if tt.want < 0 {
				if e != nil {
					t.Fatalf("found entry %d for an absent key", n)
				}
				return
			}
			if e == nil || int(n) != tt.want || e != &x.entries[tt.want] {
				t.Fatalf("got entry %d (%v), want %d", n, e != nil, tt.want)
			}
		})
	}
	if e, _ := newKeyIndex(maphash.MakeSeed(), 0).findNext([]byte(keys[0]), 0); e != nil {
		t.Error("an empty index found a key")
	}
}

// TestCassetteSession_OrderWithGuess: requests asked out of recorded
// order, and repeated ones interleaved, get the answers plain matching
// gives, whatever the session guessed.
func TestCassetteSession_OrderWithGuess(t *testing.T) {
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	add := func(dir store.Dir, frame string) {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: dir, Time: t0, Frame: []byte(frame)})
	}
	// Recorded: a b a c, answered 1 2 3 4.
	for i, arg := range []string{"a", "b", "a", "c"} {
		add(store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m","params":{"k":%q}}`, i+1, arg))
		add(store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"n":%d}}`, i+1, i+1))
	}
	c, err := NewCassette("t", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ask  []string
		want []string
	}{
		{name: "recorded order", ask: []string{"a", "b", "a", "c"}, want: []string{"1", "2", "3", "4"}},
		{name: "reversed", ask: []string{"c", "a", "b", "a"}, want: []string{"4", "1", "2", "3"}},
		{name: "repeats first", ask: []string{"a", "a", "a", "b", "c", "b"}, want: []string{"1", "3", "3", "2", "4", "2"}},
		{name: "last one first", ask: []string{"c", "c", "a", "b"}, want: []string{"4", "4", "1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := c.Open().(*cassetteSession)
			for i, arg := range tt.ask {
				p, ok := sess.Prepare(&Request{ID: []byte("7"), Method: "m", Params: []byte(fmt.Sprintf(`{"k":%q}`, arg))})
				if !ok {
					t.Fatalf("request %d (%s): no match", i, arg)
				}
				if got, want := string(p.Reply.Result), `{"n":`+tt.want[i]+`}`; got != want {
					t.Errorf("request %d (%s): got %s, want %s", i, arg, got, want)
				}
			}
		})
	}
}
