package replay

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// prepTape is a cassette with n distinct tools/call interactions, as
// bench_test.go's bigTape.
func prepTape(n int) *store.Tape {
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	add := func(dir store.Dir, frame string) {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: dir, Time: t0, Frame: []byte(frame)})
	}
	for i := range n {
		add(store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"i":%d,"text":"some words to make the request realistic"}}}`, i+1, 100000+i))
		add(store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"answer %d"}]}}`, i+1, 100000+i))
	}
	return &store.Tape{Sessions: []store.TapeSession{s}}
}

// BenchmarkPrepare: the matching alone, distinct requests in recorded
// order, against 10 and 100k interactions.
func BenchmarkPrepare(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c, err := NewCassette("bench", prepTape(n))
			if err != nil {
				b.Fatal(err)
			}
			reqs := make([]*Request, n)
			for i := range reqs {
				reqs[i] = &Request{ID: []byte("1"), Method: "tools/call", Params: []byte(fmt.Sprintf(`{"arguments":{"text":"some words to make the request realistic","i":%d},"name":"echo"}`, 100000+i))}
			}
			s := c.Open().(*cassetteSession)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				p, ok := s.Prepare(reqs[i%n])
				if !ok || len(p.Reply.Result) == 0 {
					b.Fatal("no answer")
				}
			}
		})
	}
}

// BenchmarkPrepare_Shuffled: the matching, and a read of the answer's
// bytes as the engine copies them, against 10 and 100k interactions, the
// requests asked in a scattered order (stride 7919, as
// BenchmarkThroughput_100kVs10's x-small-shuffled), so that the session's
// guess is wrong and every request goes through the index. The request is
// written into one buffer, so that only the cassette's memory is
// scattered.
func BenchmarkPrepare_Shuffled(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c, err := NewCassette("bench", prepTape(n))
			if err != nil {
				b.Fatal(err)
			}
			s := c.Open().(*cassetteSession)
			req := &Request{ID: []byte("1"), Method: "tools/call"}
			var params []byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				params = append(params[:0], `{"arguments":{"text":"some words to make the request realistic","i":`...)
				params = strconv.AppendInt(params, int64(100000+i*7919%n), 10)
				params = append(params, `},"name":"echo"}`...)
				req.Params = params
				p, ok := s.Prepare(req)
				if !ok || len(p.Reply.Result) == 0 {
					b.Fatal("no answer")
				}
				sum := 0
				for _, c := range p.Reply.Result {
					sum += int(c)
				}
				if sum == 0 {
					b.Fatal("empty answer")
				}
			}
		})
	}
}
