package replay

import (
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
