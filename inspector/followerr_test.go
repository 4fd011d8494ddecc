package inspector

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// lockedSource fails every Poll while locked, as a cassette a process
// holds too long does.
type lockedSource struct {
	Source
	locked atomic.Bool
}

func (l *lockedSource) Poll(after Mark) (*Batch, error) {
	if l.locked.Load() {
		return nil, fmt.Errorf("%w (waited 10s)", store.ErrLocked)
	}
	return l.Source.Poll(after)
}

// TestView_FollowErrorClears: a follow error on the status line goes
// once a poll succeeds again, and the new messages show.
func TestView_FollowErrorClears(t *testing.T) {
	path := writeCassette(t, sampleSession)
	m, src := openModel(t, path)
	ls := &lockedSource{Source: src}
	ls.locked.Store(true)
	h := startApp(t, m, ls, Options{Follow: true}, 120, 24)
	h.waitFor(wait, []string{"13/13", "follow: cassette is locked by another process (waited 10s)"})

	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: time.Now()})
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ls.locked.Store(false)
	h.waitFor(wait, []string{"14/14", "? help"}, "cassette is locked")
}
