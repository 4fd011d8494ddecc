package replay

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// TestKeyIndex_FindNext: a guess only saves work; right or wrong, the
// answer is find's: the key's first occurrence.
func TestKeyIndex_FindNext(t *testing.T) {
	seed := maphash.MakeSeed()
	keys := []string{"m\x00{\"a\":1}", "m\x00{\"a\":2}", "m\x00{\"b\":22}", "n\x00", "m\x00{\"a\":2}"}
	slab := make([]interaction, len(keys)+1)
	var items []*interaction
	var hashes []uint64
	for i, k := range keys {
		it := &slab[i]
		it.n, it.key = uint32(i), []byte(k)
		it.prep.Reply.Result = []byte(fmt.Sprint(i))
		items = append(items, it)
		hashes = append(hashes, maphash.Bytes(seed, it.key))
	}
	// The last one is a client notification with a request's key: the
	// requests' index does not know it.
	note := &slab[len(keys)]
	note.n, note.key, note.note = uint32(len(keys)), []byte("x\x00"), true
	x := buildKeyIndex(seed, slab, items, hashes)
	tests := []struct {
		name  string
		key   string
		guess uint32
		want  int // the first occurrence's number, -1 for none
	}{
		{name: "right guess", key: keys[1], guess: 1, want: 1},
		{name: "right guess of a later occurrence", key: keys[1], guess: 4, want: 1},
		{name: "guess of another key of the same length", key: keys[1], guess: 0, want: 1},
		{name: "guess of a longer key", key: keys[0], guess: 2, want: 0},
		{name: "guess past the end", key: keys[3], guess: 6, want: 3},
		{name: "guess far past the end", key: keys[2], guess: 1 << 31, want: 2},
		{name: "absent key", key: "m\x00{\"a\":3}", guess: 0, want: -1},
		{name: "absent key, guess past the end", key: "y\x00", guess: 6, want: -1},
		{name: "a prefix of a key", key: "m\x00{\"a\"", guess: 1 << 31, want: -1},
		{name: "a key and more", key: keys[0] + "0", guess: 1 << 31, want: -1},
		{name: "guess of a notification", key: "x\x00", guess: 5, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := x.findNext([]byte(tt.key), tt.guess)
			if tt.want < 0 {
				if it != nil {
					t.Fatalf("found interaction %d for an absent key", it.n)
				}
				return
			}
			if it != &slab[tt.want] {
				t.Fatalf("got %v, want interaction %d", it, tt.want)
			}
		})
	}
	for i, it := range items {
		if string(it.key) != keys[i] || string(it.prep.Reply.Result) != fmt.Sprint(i) {
			t.Errorf("interaction %d: key %q, result %q after indexing", i, it.key, it.prep.Reply.Result)
		}
	}
	if all := x.occurrences(&slab[1]); len(all) != 2 || all[0] != &slab[1] || all[1] != &slab[4] {
		t.Errorf("occurrences of a key recorded twice: %v", all)
	}
	if all := x.occurrences(&slab[0]); all != nil {
		t.Errorf("occurrences of a key recorded once: %v", all)
	}
	if it := buildKeyIndex(seed, nil, nil, nil).findNext([]byte(keys[0]), 0); it != nil {
		t.Error("an empty index found a key")
	}
	// A result too large to keep next to its key stays where it was.
	big := &interaction{key: []byte(keys[0])}
	big.prep.Reply.Result = bytes.Repeat([]byte("7"), keptResult+1)
	y := buildKeyIndex(seed, []interaction{}, []*interaction{big}, []uint64{hashes[0]})
	if len(y.recs) != 4+len(keys[0]) || len(big.prep.Reply.Result) != keptResult+1 || big.prep.Reply.Result[0] != '7' {
		t.Errorf("a large result: %d bytes of records, result of %d", len(y.recs), len(big.prep.Reply.Result))
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

// TestCassette_KeysAsLive: keys built at load (on the parsing workers, in
// their arenas, then moved into the index) are the keys a live request
// gets, and the index finds each request's first occurrence, for a
// cassette large enough to be parsed in blocks on every core. Params vary
// in order, white space, escapes, size (some outgrow an arena block) and
// validity.
func TestCassette_KeysAsLive(t *testing.T) {
	params := func(i int) string {
		switch i % 7 {
		case 0:
			return fmt.Sprintf(`{"name":"echo","arguments":{"i":%d,"text":"words"}}`, i)
		case 1:
			return fmt.Sprintf(` { "b" : [ %d , {"z":1,"y":[]} ] , "a" : "\u00e9\/" } `, i)
		case 2:
			return fmt.Sprintf(`{"_meta":{"progressToken":%d,"k":"v"},"name":"n%d"}`, i, i%3)
		case 3:
			return fmt.Sprintf(`{"long":"%s","i":%d}`, strings.Repeat("x", 40<<10+i), i)
		case 4:
			return `{"name":"same"}` // recorded many times
		case 5:
			return fmt.Sprintf(`{"bad":%d`, i) // not JSON: the frame is skipped
		default:
			return fmt.Sprintf(`[%d,{"b":1,"a":2}]`, i)
		}
	}
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	add := func(dir store.Dir, frame string) {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: dir, Time: time.Unix(0, 0), Frame: []byte(frame)})
	}
	const n = 5000
	for i := range n {
		add(store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i, params(i)))
		add(store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"i":%d}}`, i, i))
	}
	c, err := NewCassette("keys", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	if want := n - n/7; c.Len() != want { // every seventh is not JSON
		t.Fatalf("%d requests, want %d", c.Len(), want)
	}
	firsts := map[string]*interaction{}
	for _, it := range c.reqs {
		want, _, ok := appendKey(nil, "tools/call", []byte(params(int(it.seq/2))))
		if !ok || !bytes.Equal(it.key, want) {
			t.Fatalf("%s: key %q, live %q (ok=%v)", c.where(it), it.key, want, ok)
		}
		if firsts[string(want)] == nil {
			firsts[string(want)] = it
		}
		if got := c.byKey.find(c.byKey.hash(want), want); got != firsts[string(want)] {
			t.Fatalf("%s: the index finds %v, want the first occurrence %s", c.where(it), got, c.where(firsts[string(want)]))
		}
	}
}

// A key longer than inlineKeyMax stays where it was, out of its record,
// and is found all the same, by find as by a guess; one of its length
// that differs is not.
func TestKeyIndex_LongKeyElsewhere(t *testing.T) {
	seed := maphash.MakeSeed()
	long := "m\x00" + strings.Repeat("x", inlineKeyMax)
	keys := []string{"m\x00{\"a\":1}", long, "m\x00{\"a\":2}"}
	slab := make([]interaction, len(keys))
	var items []*interaction
	var hashes []uint64
	for i, k := range keys {
		it := &slab[i]
		it.n, it.key = uint32(i), []byte(k)
		items = append(items, it)
		hashes = append(hashes, maphash.Bytes(seed, it.key))
	}
	kept := &slab[1].key[0]
	x := buildKeyIndex(seed, slab, items, hashes)
	if &slab[1].key[0] != kept {
		t.Error("the long key was copied")
	}
	if want := 3*4 + len(keys[0]) + len(keys[2]); len(x.recs) != want {
		t.Errorf("records hold %d bytes, want %d: the short keys only", len(x.recs), want)
	}
	for _, guess := range []uint32{1, 0, 1 << 31} {
		if it := x.findNext([]byte(long), guess); it != &slab[1] {
			t.Errorf("the long key, guessing %d: found %v", guess, it)
		}
	}
	for i, k := range keys {
		if it := x.findNext([]byte(k), 1<<31); it != &slab[i] {
			t.Errorf("key %d: found %v", i, it)
		}
	}
	other := "m\x00" + strings.Repeat("x", inlineKeyMax-1) + "y"
	if it := x.findNext([]byte(other), 1<<31); it != nil {
		t.Errorf("a long key recorded nowhere found interaction %d", it.n)
	}
}
