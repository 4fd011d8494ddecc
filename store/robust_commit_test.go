package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncbuf"
	bolt "go.etcd.io/bbolt"
)

// backlogWriter is a writer of a new cassette whose backlog goes in
// pieces of 1 MiB, and a stdio session in it.
func backlogWriter(t *testing.T) (path string, w *Writer, s *Session) {
	t.Helper()
	old := commitBytes
	commitBytes = 1 << 20
	t.Cleanup(func() { commitBytes = old })
	path = filepath.Join(t.TempDir(), "backlog.db")
	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = w.NewSession(SessionInfo{Transport: TransportStdio}); err != nil {
		t.Fatal(err)
	}
	return path, w, s
}

// A backlog (another process held the file while frames came) is stored
// in transactions of commitBytes at most, not in one: bbolt keeps a copy
// of every value of a transaction until it commits, so one transaction
// for the whole backlog held it twice, and mcpspy's heap grew to four
// times MaxPending behind a slow store. The session's end goes in with
// the last piece, after all its messages.
func TestWriter_BacklogCommitsInPieces(t *testing.T) {
	path, w, s := backlogWriter(t)
	before := lastTxID(t, path)

	// Held as another process holds it, so that the frames wait.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	const n, size = 64, 256 << 10 // 16 MiB: 16 pieces
	frame := append(append([]byte(`{"jsonrpc":"2.0","method":"n","params":{"s":"`), bytes.Repeat([]byte{'x'}, size-48)...), `"}}`...)
	for range n {
		s.Append(S2C, time.Now(), frame, nil)
	}
	s.Finish(EndInfo{Reason: EndEOF})
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	if txs := lastTxID(t, path) - before; txs < n*len(frame)/commitBytes {
		t.Errorf("the %d MiB backlog went in %d transactions, want one per MiB at least", n*len(frame)>>20, txs)
	}
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got := tape.Sessions[0]
	if len(got.Messages) != n {
		t.Fatalf("%d messages stored, want %d", len(got.Messages), n)
	}
	for i, m := range got.Messages {
		if m.Seq != uint64(i+1) {
			t.Fatalf("message %d has seq %d: not dense", i, m.Seq)
		}
	}
	if got.Info.End == nil || got.Info.End.Reason != EndEOF {
		t.Errorf("session end %+v, want eof", got.Info.End)
	}
}

// lastTxID is the id of the cassette's last committed write transaction.
func lastTxID(t *testing.T, path string) int {
	t.Helper()
	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int
	if err := db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// A recorder storing its backlog piece by piece lets go of the file
// between pieces when another process waits for it, as it does between
// commits: the others' traffic waits for one piece, not for the whole
// backlog (with six recorders behind a slow disk, one waited out
// LockTimeout and warned that its commit failed).
func TestWriter_BacklogLetsWaitersIn(t *testing.T) {
	path, w, s := backlogWriter(t)
	defer w.Close()
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	fd := int(other.Fd())
	// Held as another process holds it, so that all 64 frames wait for
	// one Flush.
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	frame := append(append([]byte(`{"jsonrpc":"2.0","method":"n","params":{"s":"`), bytes.Repeat([]byte{'x'}, 256<<10)...), `"}}`...)
	for range 64 {
		s.Append(S2C, time.Now(), frame, nil)
	}
	total := 64 * len(frame)
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush() }()

	// The other process lets go and waits for the file again, in line as
	// mcptape's openers wait (it marks its wait and lets those ahead go
	// first), until it has it with some of the backlog stored: the rest
	// must be left.
	left := total
	holdAgainOnce(t, other, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		left = w.pendingBytes
		return left < total
	})
	if left == 0 {
		t.Error("the writer stored its whole backlog before it let a waiting process have the file")
	}
	if err := syscall.Flock(fd, syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
}

// A commit that keeps failing is said once, and so is its recovery: the
// retries, four a second by default, each printed the same line into the
// stderr that a host shares with its server, for as long as a disk stayed
// full or another process held the file.
func TestWriter_RetriesSaySoOnce(t *testing.T) {
	setLease(t, leaseIdle, maxLeaseHold, 20*time.Millisecond)
	path := filepath.Join(t.TempDir(), "retry.db")
	var log syncbuf.Buffer
	w, err := NewWriter(path, WriterOptions{NoSync: true, CommitInterval: 5 * time.Millisecond, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)

	// Each try marks the file while it waits: let three go by.
	for tries, waiting, deadline := 0, false, time.Now().Add(30*time.Second); tries < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d tries to commit in 30 s, want 3", tries)
		}
		now := othersWaiting(other)
		if now && !waiting {
			tries++
		}
		waiting = now
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "works again"); {
		if time.Now().After(deadline) {
			t.Fatalf("no word of the recovery in 30 s; log:\n%s", log.String())
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "will retry"); n != 1 {
		t.Errorf("the failure was told %d times, want once; log:\n%s", n, log.String())
	}
}
