package replay

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// bigCallParams are the params of a tools/call of about size bytes, name
// first, as clients write them: one argument, an array of many short
// strings, which canonicalising writes a value at a time.
func bigCallParams(size int) []byte {
	const row = `"a row of the table",`
	rows := strings.Repeat(row, size/len(row))
	return []byte(`{"name":"upload","arguments":{"rows":[` + rows[:len(rows)-1] + `]}}`)
}

// A request's members are put in canonical order where they were written,
// not written again past the end: a buffer with room for the params takes
// the match key of a big tools/call, whose arguments sort before its name,
// without growing.
func TestAppendKey_SortsInPlace(t *testing.T) {
	params := bigCallParams(1 << 20)
	buf := make([]byte, 0, len("tools/call")+1+len(params))
	if n := testing.AllocsPerRun(5, func() { appendKey(buf, "tools/call", params) }); n != 0 {
		t.Errorf("the key of a %d-byte tools/call took %v allocations, want none", len(params), n)
	}
}

// heapBytesAllocated is how many bytes of heap fn allocated.
func heapBytesAllocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Matching a big request copies it once, into its match key: the key is
// not grown to its size a doubling at a time, leaving as much again
// behind, nor are its members written twice to sort them.
func TestPrepare_BigRequestCopiedOnce(t *testing.T) {
	const size = 4 << 20
	params := bigCallParams(size)
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, frame := range []string{
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":%s}`, params),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stored"}]}}`,
	} {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: []store.Dir{store.C2S, store.S2C}[i], Time: t0, Frame: []byte(frame)})
	}
	c, err := NewCassette("big", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	sess := c.Open()
	req := &Request{ID: []byte("7"), Method: "tools/call", Params: params}
	var ok bool
	got := heapBytesAllocated(func() { _, ok = sess.(Preparer).Prepare(req) })
	if !ok {
		t.Fatal("the recorded request did not match itself")
	}
	if limit := uint64(size) * 5 / 4; got > limit {
		t.Errorf("matching a %d MiB request allocated %.1f MiB, want at most %.1f MiB (one copy)", size>>20, float64(got)/(1<<20), float64(limit)/(1<<20))
	}
}
