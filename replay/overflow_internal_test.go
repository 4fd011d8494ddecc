package replay

import (
	"bytes"
	"fmt"
	"maps"
	"sync"
	"testing"
)

// lostLog collects what a queue or event log gives up, in order.
type lostLog struct {
	mu   sync.Mutex
	msgs []string
	whys map[string]int // messages lost for each reason
}

func (l *lostLog) add(msgs [][]byte, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		l.msgs = append(l.msgs, string(m))
	}
	if l.whys == nil {
		l.whys = map[string]int{}
	}
	l.whys[why] += len(msgs)
}

func (l *lostLog) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// A client that never reads its stream: past the bound, the oldest
// message is dropped and counted lost at once; the rest are lost when the
// stream closes. Every message pushed is either sent or counted.
func TestOverflow_CountsWhatIsDropped(t *testing.T) {
	const extra = 3
	type lostFunc = func([][]byte, string)
	streams := map[string]struct {
		open               func(lost lostFunc) (push func([]byte) error, end func())
		overflow, whenEnds string
	}{
		"legacy SSE queue": {func(lost lostFunc) (func([]byte) error, func()) {
			q := newQueue(lost)
			return q.push, q.close
		}, whyNotRead, whyStreamClosed},
		"GET stream log": {func(lost lostFunc) (func([]byte) error, func()) {
			l := newEventLog(lost)
			return l.push, l.close
		}, whyFellBehind, whyNoGETStream},
	}
	for name, st := range streams {
		t.Run(name, func(t *testing.T) {
			lost := &lostLog{}
			push, end := st.open(lost.add)
			for i := range maxQueued + extra {
				_ = push(fmt.Appendf(nil, "m%d", i))
			}
			got := lost.got()
			if len(got) != extra || got[0] != "m0" || got[extra-1] != fmt.Sprintf("m%d", extra-1) {
				t.Fatalf("lost while pushing: %d, first %q; want the %d oldest", len(got), got[:min(len(got), 3)], extra)
			}
			end()
			if got := lost.got(); len(got) != maxQueued+extra || got[len(got)-1] != fmt.Sprintf("m%d", maxQueued+extra-1) {
				t.Errorf("lost in all: %d, want every message pushed (%d)", len(got), maxQueued+extra)
			}
			if want := map[string]int{st.overflow: extra, st.whenEnds: maxQueued}; !maps.Equal(lost.whys, want) {
				t.Errorf("lost for %v, want %v", lost.whys, want)
			}
		})
	}
}

// A legacy session that ends before its stream's pump first runs (the
// client sent, was answered and expired the session while the stream's
// goroutine had not been scheduled since it named the endpoint): what
// the session queued still goes out on the stream, then the stream ends.
// A stream that never attached has no one to write it: it is lost.
func TestQueue_EndsBeforePumpRuns(t *testing.T) {
	for _, attached := range []bool{true, false} {
		lost := &lostLog{}
		q := newQueue(lost.add)
		if attached {
			q.attach()
		}
		_ = q.push([]byte(`{"id":1}`))
		_ = q.push([]byte(`{"id":2}`))
		q.close()
		var out bytes.Buffer
		if attached {
			q.pump(&sseWriter{w: &out}, "message", nil)
			q.detach()
		}
		var want string
		if attached {
			want = "event: message\nid: 1\ndata: {\"id\":1}\n\nevent: message\nid: 2\ndata: {\"id\":2}\n\n"
		}
		if out.String() != want {
			t.Errorf("attached %v: stream carried %q, want %q", attached, out.String(), want)
		}
		if got, wantLost := len(lost.got()), map[bool]int{true: 0, false: 2}[attached]; got != wantLost {
			t.Errorf("attached %v: %d lost, want %d", attached, got, wantLost)
		}
	}
}
