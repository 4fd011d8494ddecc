package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// setLease sets the lease timing and LockTimeout for one test.
func setLease(t *testing.T, idle, maxHold, lockTimeout time.Duration) {
	t.Helper()
	oldIdle, oldHold, oldLock := leaseIdle, maxLeaseHold, LockTimeout
	leaseIdle, maxLeaseHold, LockTimeout = idle, maxHold, lockTimeout
	t.Cleanup(func() { leaseIdle, maxLeaseHold, LockTimeout = oldIdle, oldHold, oldLock })
}

// busyWriter appends to one session every millisecond until the test ends,
// and returns the writer once its first message is committed.
func busyWriter(t *testing.T, path string) *Writer {
	t.Helper()
	w, err := NewWriter(path, WriterOptions{NoSync: true, CommitInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			s.Append(C2S, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i), nil)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

func countMessages(t *testing.T, path string) int {
	t.Helper()
	n := 0
	err := View(path, func(r *Reader) error {
		infos, err := r.Sessions()
		for _, in := range infos {
			n += r.Count(in.ID)
		}
		return err
	})
	if err != nil {
		t.Fatalf("read while the writer is busy: %v", err)
	}
	return n
}

// A busy writer keeps one handle: the whole point of the lease.
func TestLease_BusyWriterKeepsTheFile(t *testing.T) {
	setLease(t, time.Hour, time.Hour, 10*time.Second)
	w := busyWriter(t, filepath.Join(t.TempDir(), "c.db"))
	for range 20 {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	w.flushMu.Lock()
	opens := w.lease.opens
	w.flushMu.Unlock()
	if opens != 1 {
		t.Errorf("the file was opened %d times for 20 commits, want once", opens)
	}
}

// A reader gets in while a writer keeps committing, by its wait mark alone:
// the lease would otherwise outlast the reader's lock timeout.
func TestLease_ReaderGetsInByWaitMark(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("wait marks are open-file-description locks, which only Linux has; elsewhere readers wait for maxLeaseHold")
	}
	setLease(t, time.Hour, time.Hour, 2*time.Second)
	path := filepath.Join(t.TempDir(), "c.db")
	busyWriter(t, path)
	last := 0
	for i := range 5 {
		n := countMessages(t, path)
		if n < last || n == 0 {
			t.Fatalf("read %d: %d messages after %d", i, n, last)
		}
		last = n
	}
}

// A process that does not mark its wait (here bbolt itself) still gets in:
// when the writer goes idle, and when a busy writer's lease runs out.
func TestLease_UnmarkedWaiterGetsIn(t *testing.T) {
	tests := []struct {
		name          string
		idle, maxHold time.Duration
		busy          bool
	}{
		{name: "idle writer", idle: 20 * time.Millisecond, maxHold: time.Hour},
		{name: "busy writer past its longest lease", idle: time.Hour, maxHold: 20 * time.Millisecond, busy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setLease(t, tt.idle, tt.maxHold, 10*time.Second)
			path := filepath.Join(t.TempDir(), "c.db")
			if tt.busy {
				busyWriter(t, path)
			} else {
				committedWriter(t, path)
			}
			db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
			if errors.Is(err, bolterrors.ErrTimeout) {
				t.Fatal("the writer never let go of the file")
			}
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
		})
	}
}

// letGo commits what w holds and closes its handle, as the lease does when
// another process waits, so that its next commit opens the file again.
func letGo(t *testing.T, w *Writer) {
	t.Helper()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	if err := w.lease.release(); err != nil {
		t.Fatal(err)
	}
}

// checkDenseSeqs fails unless every session at path holds seqs 1, 2, …
// without gaps, and want sessions.
func checkDenseSeqs(t *testing.T, path string, want int) {
	t.Helper()
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != want {
		t.Errorf("%d sessions, want %d", len(tape.Sessions), want)
	}
	for _, s := range tape.Sessions {
		for i, m := range s.Messages {
			if m.Seq != uint64(i+1) {
				t.Errorf("session %s: message %d has seq %d", s.Info.ID, i+1, m.Seq)
				break
			}
		}
	}
}

// A writer's seqs stay dense from 1 when it gives the file up between
// commits and opens it again, alone or taking turns with another writer.
func TestWriter_SeqDenseAcrossReopens(t *testing.T) {
	tests := []struct {
		name    string
		writers int
	}{
		{"alone", 1},
		{"taking turns with another writer", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			var sessions []*Session
			for range tt.writers {
				w, err := NewWriter(path, WriterOptions{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.Close() })
				s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
				if err != nil {
					t.Fatal(err)
				}
				sessions = append(sessions, s)
			}
			for round := range 4 {
				for _, s := range sessions {
					for i := range 3 {
						s.Append(C2S, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"n","params":{"round":%d,"i":%d}}`, round, i), nil)
					}
					letGo(t, s.w)
				}
			}
			for _, s := range sessions {
				if err := s.w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			checkDenseSeqs(t, path, tt.writers)
		})
	}
}

// A cassette another process keeps locked gets an error naming it once
// LockTimeout has passed, not an endless wait.
func TestOpen_LockedFile(t *testing.T) {
	setLease(t, leaseIdle, maxLeaseHold, 100*time.Millisecond)
	tests := []struct {
		name string
		open func(path string) error
	}{
		{"read", Check},
		{"write", Init},
		{"writer", func(path string) error {
			w, err := NewWriter(path, WriterOptions{NoSync: true})
			if err == nil {
				w.Close()
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			if err := Init(path); err != nil {
				t.Fatal(err)
			}
			holder, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- tt.open(path) }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("still waiting for the lock 10 s on, with LockTimeout 100 ms")
			}
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("error %v, want ErrLocked", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// A cassette removed while recording is made anew (reviveIfRemoved); its
// sessions' seqs must still run from 1 without gaps, or its own export is
// refused by import ("seq 3, want 1"): the writer used to carry on with
// the seqs the removed file held.
func TestWriter_RevivedCassetteSeqsFromOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"before"}`), nil)
	s.Append(S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil)
	letGo(t, w)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"after"}`), nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkDenseSeqs(t, path, 1)
	var export bytes.Buffer
	if err := Export(path, &export, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSONL(&export, "revived.jsonl"); err != nil {
		t.Errorf("the revived cassette's export does not import: %v", err)
	}
}

// A commit that fails (another process holds the cassette) keeps its
// messages for the retry; Rewrite must still see each message once. vcr's
// Received notes what the host sent from Rewrite, and showed a request
// twice after a retried commit.
func TestWriter_RetriedCommitRewritesOnce(t *testing.T) {
	setLease(t, leaseIdle, maxLeaseHold, 50*time.Millisecond)
	path := filepath.Join(t.TempDir(), "c.db")
	var mu sync.Mutex
	seen := map[uint64]int{} // seq → Rewrite calls
	w, err := NewWriter(path, WriterOptions{NoSync: true, Rewrite: func(m *Message) *Message {
		mu.Lock()
		defer mu.Unlock()
		seen[m.Seq]++
		c := *m
		c.Frame = bytes.ReplaceAll(m.Frame, []byte("secret"), []byte("[redacted]"))
		return &c
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"first"}`), nil)
	letGo(t, w)

	holder, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":2,"method":"second","params":{"key":"secret"}}`), nil)
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":3,"method":"third"}`), nil)
	for range 2 { // two failed tries, as the commit loop's retries make
		if err := w.Flush(); !errors.Is(err, ErrLocked) {
			t.Fatalf("commit with the file locked: %v, want ErrLocked", err)
		}
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for seq := uint64(1); seq <= 3; seq++ {
		if seen[seq] != 1 {
			t.Errorf("message %d went through Rewrite %d times, want once", seq, seen[seq])
		}
	}
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	msgs := tape.Sessions[0].Messages
	if len(msgs) != 3 || !bytes.Contains(msgs[1].Frame, []byte(`"key":"[redacted]"`)) {
		t.Errorf("stored %d messages, the second %s; want 3, its key redacted", len(msgs), msgs[1].Frame)
	}
}

// Finish records a session's end without waiting for the file: it returns
// while another process holds the lock (End would wait for LockTimeout),
// and the end is stored once the file is free again.
func TestSession_FinishDoesNotWaitForTheFile(t *testing.T) {
	setLease(t, 10*time.Millisecond, maxLeaseHold, time.Minute)
	path := filepath.Join(t.TempDir(), "c.db")
	w, s := committedWriter(t, path)
	holder, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil { // once the writer's lease is idle
		t.Fatal(err)
	}
	finished := make(chan struct{})
	go func() {
		s.Finish(EndInfo{Reason: EndClosed})
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("Finish still waiting 10 s on, while another process holds the cassette")
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	err = View(path, func(r *Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		if len(infos) != 1 || infos[0].End == nil || infos[0].End.Reason != EndClosed || infos[0].End.Time.IsZero() {
			t.Errorf("sessions %+v, want one ended closed, with a time", infos)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// committedWriter opens a writer on path (closed when the test ends) with
// one session, and commits one message of it.
func committedWriter(t *testing.T, path string) (*Writer, *Session) {
	t.Helper()
	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"n"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return w, s
}
