package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// holdLock takes the cassette's lock, as another process would, once w
// has let the file go. The returned func lets it go.
func holdLock(t *testing.T, w *Writer) (unlock func()) {
	t.Helper()
	letGo(t, w)
	return peertest.HoldLock(t, w.Path())
}

// eagerWriter returns a writer at path that commits every millisecond,
// so that its commits run among the test's calls. The test's end closes
// it.
func eagerWriter(t *testing.T, path string) *Writer {
	t.Helper()
	w, err := NewWriter(path, WriterOptions{NoSync: true, CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// startedFrames are the frames the tests below record in a started session.
var startedFrames = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
}

// checkStarted fails unless the cassette at path holds sessions sessions
// with dense seqs, among them id with the upstream "started" and
// startedFrames at seqs 1, 2, 3.
func checkStarted(t *testing.T, path, id string, sessions int) {
	t.Helper()
	checkDenseSeqs(t, path, sessions)
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tape.Sessions {
		if s.Info.ID != id {
			continue
		}
		if s.Info.Upstream != "started" || s.Info.Start.IsZero() {
			t.Errorf("session %s info %+v, want upstream started, a start time", id, s.Info)
		}
		var got []string
		for _, m := range s.Messages {
			got = append(got, string(m.Frame))
		}
		if !slices.Equal(got, startedFrames) {
			t.Errorf("session %s holds %q, want %q", id, got, startedFrames)
		}
		return
	}
	t.Errorf("no session %s in %s", id, path)
}

// StartSession and Append return while another process holds the file
// (NewSession would wait for LockTimeout); the session, its info and its
// messages are stored once the file is free again.
func TestWriter_StartSessionDoesNotWaitForTheFile(t *testing.T) {
	setLease(t, 10*time.Millisecond, maxLeaseHold, time.Minute)
	path := filepath.Join(t.TempDir(), "c.db")
	w, _ := committedWriter(t, path)
	unlock := holdLock(t, w)
	started := make(chan *Session, 1)
	go func() {
		s, err := w.StartSession(SessionInfo{Transport: TransportHTTP, Upstream: "started"})
		if err != nil {
			t.Error(err)
			close(started)
			return
		}
		for i, f := range startedFrames {
			s.Append(Dir(i%2), time.Now(), []byte(f), nil)
		}
		started <- s
	}()
	var s *Session
	select {
	case s = <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("StartSession and Append still waiting 10 s on, while another process holds the cassette")
	}
	if s == nil {
		return
	}
	if id := s.ID(); id != "" {
		t.Errorf("ID() = %q before any commit could store the session, want empty", id)
	}
	unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s.ID() != "s2" {
		t.Errorf("ID() = %q after Close, want s2", s.ID())
	}
	checkStarted(t, path, s.ID(), 2)
}

// A commit that cannot store a started session keeps it, and its
// messages, for the next: nothing is lost, seqs stay dense, and Rewrite
// sees each message once, with the session's id.
func TestWriter_StartSessionAfterAFailedCommit(t *testing.T) {
	tests := []struct {
		name string
		// spoil makes the next commits fail or find no file, and returns
		// what makes them work again (nil: they just work).
		spoil func(t *testing.T, w *Writer) func()
		fails bool
	}{
		{"another process holds the file", func(t *testing.T, w *Writer) func() { return holdLock(t, w) }, true},
		{"the file was removed", func(t *testing.T, w *Writer) func() {
			letGo(t, w)
			if err := os.Remove(w.Path()); err != nil {
				t.Fatal(err)
			}
			return nil
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setLease(t, leaseIdle, maxLeaseHold, 50*time.Millisecond)
			path := filepath.Join(t.TempDir(), "c.db")
			var mu sync.Mutex
			rewrites := map[string][]uint64{} // session → seqs Rewrite saw
			w, err := NewWriter(path, WriterOptions{NoSync: true, Rewrite: func(m *Message) *Message {
				mu.Lock()
				defer mu.Unlock()
				rewrites[m.Session] = append(rewrites[m.Session], m.Seq)
				return m
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			first, err := w.NewSession(SessionInfo{Transport: TransportStdio})
			if err != nil {
				t.Fatal(err)
			}
			first.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"n"}`), nil)
			restore := tt.spoil(t, w)
			s, err := w.StartSession(SessionInfo{Transport: TransportHTTP, Upstream: "started"})
			if err != nil {
				t.Fatal(err)
			}
			s.Append(C2S, time.Now(), []byte(startedFrames[0]), nil)
			s.Append(S2C, time.Now(), []byte(startedFrames[1]), nil)
			if tt.fails {
				for range 2 { // two failed tries, as the commit loop's retries make
					if err := w.Flush(); !errors.Is(err, ErrLocked) {
						t.Fatalf("commit with the file locked: %v, want ErrLocked", err)
					}
				}
				if id := s.ID(); id != "" {
					t.Errorf("ID() = %q after failed commits, want empty", id)
				}
			}
			s.Append(C2S, time.Now(), []byte(startedFrames[2]), nil)
			if restore != nil {
				restore()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			checkStarted(t, path, s.ID(), 2)
			mu.Lock()
			defer mu.Unlock()
			if got := rewrites[s.ID()]; !slices.Equal(got, []uint64{1, 2, 3}) {
				t.Errorf("Rewrite saw seqs %v of %s, want 1, 2, 3 once each; all it saw: %v", got, s.ID(), rewrites)
			}
		})
	}
}

// Two writers (two recorders) starting sessions at once into one cassette
// give each its own id; each writer's ids follow the order it started
// its sessions in.
func TestWriter_StartSessionIDsAcrossWriters(t *testing.T) {
	const writers, each = 2, 20
	path := filepath.Join(t.TempDir(), "c.db")
	var wg sync.WaitGroup
	sessions := make([][]*Session, writers)
	for i := range writers {
		w, err := NewWriter(path, WriterOptions{NoSync: true, CommitInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if err := w.Close(); err != nil {
					t.Error(err)
				}
			}()
			for j := range each {
				s, err := w.StartSession(SessionInfo{Transport: TransportHTTP, Upstream: fmt.Sprintf("w%d/%d", i, j)})
				if err != nil {
					t.Error(err)
					return
				}
				s.Append(C2S, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"w%d/%d"}`, i, j), nil)
				sessions[i] = append(sessions[i], s)
			}
		}()
	}
	wg.Wait()
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != writers*each {
		t.Errorf("%d sessions stored, want %d", len(tape.Sessions), writers*each)
	}
	for _, ts := range tape.Sessions {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"%s"}`, ts.Info.Upstream)
		if len(ts.Messages) != 1 || string(ts.Messages[0].Frame) != want {
			t.Errorf("session %s (%s) holds %d messages, want one: %s", ts.Info.ID, ts.Info.Upstream, len(ts.Messages), want)
		}
	}
	checkIDsIncrease(t, "writer", sessions)
}

// checkIDsIncrease fails unless each of sessions[i], the sessions one
// writer or goroutine began in turn, has an id of its own, above the id
// of the one begun before it.
func checkIDsIncrease(t *testing.T, by string, sessions [][]*Session) {
	t.Helper()
	seen := map[string]bool{}
	for i, ss := range sessions {
		last := 0
		for j, s := range ss {
			id := s.ID()
			n, err := strconv.Atoi(id[min(1, len(id)):])
			if err != nil || seen[id] || n <= last {
				t.Errorf("%s %d's session %d has id %q after s%d (ids seen: %v)", by, i, j, id, last, seen)
			}
			seen[id], last = true, n
		}
	}
}

// A follower (the inspector, another process) reading the cassette while
// a started session records finds it with its messages under its id.
func TestWriter_FollowerSeesStartedSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := eagerWriter(t, path)
	s, err := w.StartSession(SessionInfo{Transport: TransportHTTP, Upstream: "started"})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(startedFrames[0]), nil)
	for deadline := time.Now().Add(10 * time.Second); ; {
		var sessions, methods []string
		err := View(path, func(r *Reader) error {
			infos, err := r.Sessions()
			for _, info := range infos {
				sessions = append(sessions, info.ID+" "+info.Upstream)
				if err := r.RawSummaries(info.ID, 1, 0, func(sum *RawSummary) error {
					methods = append(methods, fmt.Sprintf("%s %d %s", info.ID, sum.Seq, sum.Method))
					return nil
				}); err != nil {
					return err
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(methods) > 0 {
			if !slices.Equal(sessions, []string{"s1 started"}) || !slices.Equal(methods, []string{"s1 1 initialize"}) {
				t.Errorf("the follower saw sessions %q, messages %q; want s1 with its initialize", sessions, methods)
			}
			if s.ID() != "s1" {
				t.Errorf("ID() = %q once the follower sees s1", s.ID())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s on, the follower sees sessions %q and no message", sessions)
		}
		time.Sleep(5 * time.Millisecond) // poll: a follower has no signal but the file
	}
}

// Sessions started while a commit gives earlier ones their ids keep their
// messages: those wait for the commit that gives their session its id.
// (They went out with the first, under no session, and were lost.)
func TestWriter_StartSessionDuringCommits(t *testing.T) {
	const starters, each = 8, 50
	path := filepath.Join(t.TempDir(), "c.db")
	w := eagerWriter(t, path)
	done := make(chan struct{})
	flushed := make(chan error, 1)
	go func() { // commits back to back, besides the writer's own
		for {
			select {
			case <-done:
				flushed <- nil
				return
			default:
			}
			if err := w.Flush(); err != nil {
				flushed <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range starters {
		wg.Go(func() {
			for j := range each {
				s, err := w.StartSession(SessionInfo{Transport: TransportHTTP, Upstream: fmt.Sprintf("%d/%d", i, j)})
				if err != nil {
					t.Error(err)
					return
				}
				s.Append(C2S, time.Now(), []byte(startedFrames[0]), nil)
				s.Append(S2C, time.Now(), []byte(startedFrames[1]), nil)
			}
		})
	}
	wg.Wait()
	close(done)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != starters*each {
		t.Errorf("%d sessions stored, want %d", len(tape.Sessions), starters*each)
	}
	lost := 0
	for _, s := range tape.Sessions {
		if len(s.Messages) != 2 {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d sessions lack messages", lost, len(tape.Sessions))
	}
	checkDenseSeqs(t, path, starters*each)
}
