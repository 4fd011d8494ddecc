package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// quietWriter returns a writer at path whose commit goroutine has made
// its one commit, of s1 (begun with NewSession), and now waits an hour
// for the next: only the test's own calls give ids, so that a commit of
// the goroutine's, between a StartSession and a NewSession, cannot put
// their ids in order by chance.
func quietWriter(t *testing.T, path string) *Writer {
	t.Helper()
	var once sync.Once
	committing := make(chan struct{})
	w, err := NewWriter(path, WriterOptions{NoSync: true, CommitInterval: time.Hour, Rewrite: func(m *Message) *Message {
		once.Do(func() { close(committing) }) // past allocate: the goroutine gives no more ids
		return m
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio, Upstream: "quiet"})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"n"}`), nil) // wakes the goroutine
	select {
	case <-committing:
	case <-time.After(10 * time.Second):
		t.Fatal("the commit goroutine has not committed s1 10 s on")
	}
	return w
}

// Ids follow the order a writer's sessions were begun in, whether
// StartSession or NewSession began them, and a started session's
// messages, appended before and after it got its id, land under it.
func TestWriter_SessionIDsInBeginOrder(t *testing.T) {
	tests := []struct {
		name string
		// steps, one letter each: S StartSession, N NewSession, F Flush.
		steps string
	}{
		{"started, then new", "SN"},
		{"new, then started", "NS"},
		{"two started, then new", "SSN"},
		{"started, new, started", "SNS"},
		{"started, then two new", "SNN"},
		{"new, started, new, started", "NSNS"},
		{"a flush between", "SFN"},
		{"started, new, flush, started, new", "SNFSN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			w := quietWriter(t, path)
			frame := func(id string, n int) []byte {
				return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"%s/%d"}`, id, n)
			}
			var sessions []*Session
			var how []rune
			for _, step := range tt.steps {
				// Upstream: the id the session should get; s1 is quietWriter's.
				info := SessionInfo{Transport: TransportHTTP, Upstream: "s" + strconv.Itoa(len(sessions)+2)}
				var s *Session
				var err error
				switch step {
				case 'S':
					s, err = w.StartSession(info)
				case 'N':
					s, err = w.NewSession(info)
				case 'F':
					err = w.Flush()
				}
				if err != nil {
					t.Fatalf("step %c: %v", step, err)
				}
				if s != nil {
					s.Append(C2S, time.Now(), frame(info.Upstream, 1), nil)
					sessions = append(sessions, s)
					how = append(how, step)
				}
			}
			for _, s := range sessions {
				s.Append(S2C, time.Now(), frame(s.Info().Upstream, 2), nil)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for i, s := range sessions {
				if want := "s" + strconv.Itoa(i+2); s.ID() != want {
					t.Errorf("session %d, begun with %c, has id %q, want %s", i+1, how[i], s.ID(), want)
				}
			}
			tape, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(tape.Sessions) != len(sessions)+1 {
				t.Errorf("%d sessions stored, want %d", len(tape.Sessions), len(sessions)+1)
			}
			for _, ts := range tape.Sessions[1:] {
				want := []string{string(frame(ts.Info.ID, 1)), string(frame(ts.Info.ID, 2))}
				var got []string
				for _, m := range ts.Messages {
					got = append(got, string(m.Frame))
				}
				if ts.Info.Upstream != ts.Info.ID || !slices.Equal(got, want) {
					t.Errorf("session %s holds the session begun as %s, frames %q; want %s, %q", ts.Info.ID, ts.Info.Upstream, got, ts.Info.ID, want)
				}
			}
		})
	}
}

// A NewSession that cannot store its session (another process holds the
// file) keeps the sessions started before it, and their messages, for
// the next try, which still gives them ids before a later NewSession's.
func TestWriter_FailedNewSessionKeepsStarted(t *testing.T) {
	setLease(t, leaseIdle, maxLeaseHold, 50*time.Millisecond)
	path := filepath.Join(t.TempDir(), "c.db")
	w := quietWriter(t, path)
	unlock := holdLock(t, w)
	s, err := w.StartSession(SessionInfo{Transport: TransportHTTP, Upstream: "started"})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(startedFrames[0]), nil)
	s.Append(S2C, time.Now(), []byte(startedFrames[1]), nil)
	if _, err := w.NewSession(SessionInfo{Transport: TransportStdio}); !errors.Is(err, ErrLocked) {
		t.Fatalf("NewSession with the file locked: %v, want ErrLocked", err)
	}
	if id := s.ID(); id != "" {
		t.Errorf("ID() = %q after a failed NewSession, want empty", id)
	}
	s.Append(C2S, time.Now(), []byte(startedFrames[2]), nil)
	unlock()
	n, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "s2" || n.ID() != "s3" {
		t.Errorf("started session %q, later NewSession %q; want s2, s3", s.ID(), n.ID())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkStarted(t, path, s.ID(), 3)
}

// Goroutines that begin sessions both ways, each its own in turn, while
// the writer commits and sessions Finish and End, get ids in the order
// each began them, and keep their messages and ends: no call deadlocks
// another.
func TestWriter_MixedSessionsDuringCommits(t *testing.T) {
	const goroutines, each = 4, 20
	path := filepath.Join(t.TempDir(), "c.db")
	w := eagerWriter(t, path)
	sessions := make([][]*Session, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			for j := range each {
				begin := w.StartSession
				if (i+j)%2 == 1 {
					begin = w.NewSession
				}
				s, err := begin(SessionInfo{Transport: TransportHTTP, Upstream: fmt.Sprintf("%d/%d", i, j)})
				if err != nil {
					t.Error(err)
					return
				}
				sessions[i] = append(sessions[i], s)
				s.Append(C2S, time.Now(), []byte(startedFrames[0]), nil)
				if j%4 == 3 {
					if err := s.End(EndInfo{Reason: "eof"}); err != nil {
						t.Error(err)
					}
					continue
				}
				s.Finish(EndInfo{Reason: "eof"})
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkIDsIncrease(t, "goroutine", sessions)
	checkDenseSeqs(t, path, goroutines*each)
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range tape.Sessions {
		if len(ts.Messages) != 1 || ts.Info.End == nil {
			t.Errorf("session %s (%s) holds %d messages, end %v; want 1 and an end", ts.Info.ID, ts.Info.Upstream, len(ts.Messages), ts.Info.End)
		}
	}
}
