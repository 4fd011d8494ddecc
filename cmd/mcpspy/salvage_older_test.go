package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// lastTwoCommits reads the meta pages of the bbolt file at path (page 0
// and 1, each after a 16-byte page header: magic, version, page size,
// flags, root pgid, sequence, freelist pgid, high water mark pgid, txid,
// checksum; native order, little-endian here): the newest commit's txid
// and root, the one before's txid and high water mark (every page of its
// tree lies below it), and the page size.
func lastTwoCommits(t *testing.T, path string) (newestTxid, newestRoot, beforeTxid, beforeHighWater, pageSize uint64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	pageSize = uint64(le.Uint32(data[16+8:]))
	meta := func(i uint64) (txid, root, highWater uint64) {
		b := data[i*pageSize+16:]
		return le.Uint64(b[48:]), le.Uint64(b[16:]), le.Uint64(b[40:])
	}
	tx0, root0, hw0 := meta(0)
	tx1, root1, hw1 := meta(1)
	if tx0 > tx1 {
		return tx0, root0, tx1, hw1, pageSize
	}
	return tx1, root1, tx0, hw0, pageSize
}

// A recording cut short past the root of its last commit's tree, with
// every page of the commit before it kept: ls says the commit before is
// still there and points at --salvage, which writes exactly what that
// commit held, says on stderr that it read the commit before the last
// and that what the last wrote is lost, and exits 1.
func TestMcpspy_ExportSalvageReadsTheCommitBeforeACutRoot(t *testing.T) {
	// The writer's commit loop stores what waits as soon as the first
	// message is appended, on a goroutine of its own: run late, it can
	// split the last commit in two, and the copy is then not of the
	// commit before the last. Such a file is no case to test: make
	// another.
	var path, before string
	for attempt := 1; ; attempt++ {
		path, before = recordTwoCommits(t)
		newestTxid, _, beforeTxid, _, _ := lastTwoCommits(t, path)
		txid, _, _, _, _ := lastTwoCommits(t, before)
		if txid == beforeTxid && newestTxid == beforeTxid+1 {
			break
		}
		if attempt == 10 {
			t.Fatalf("the copy is of commit %d; the file's meta pages name commits %d and %d (10 attempts)", txid, beforeTxid, newestTxid)
		}
	}
	dir := filepath.Dir(path)

	newestTxid, newestRoot, beforeTxid, beforeHighWater, pageSize := lastTwoCommits(t, path)
	if newestRoot < beforeHighWater {
		t.Fatalf("the last root (page %d) lies among the pages of the commit before (below %d): no case to test", newestRoot, beforeHighWater)
	}
	if err := os.Truncate(path, int64(beforeHighWater*pageSize)); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runCaptured("ls", path)
	wantLs := fmt.Sprintf("the cut took the root of its last commit's tree (txid %d, page %d, at byte %d); the commit before it (txid %d) is still in the file; mcpspy export --salvage", newestTxid, newestRoot, newestRoot*pageSize, beforeTxid)
	if code != 1 || !strings.Contains(stderr, wantLs) {
		t.Errorf("ls: exit %d, stderr %q; want exit 1 and %q", code, stderr, wantLs)
	}

	wantOut := filepath.Join(dir, "before.jsonl")
	if code, _, stderr := runCaptured("export", "-o", wantOut, before); code != 0 {
		t.Fatalf("export of the copy: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "rescued.jsonl")
	code, _, stderr = runCaptured("export", "--salvage", "-o", out, path)
	wantErr := fmt.Sprintf("mcpspy: export: %s: the cut took the root of the last commit's tree (txid %d, page %d): salvaged the commit before it (txid %d); what the last commit wrote is lost, how much is not known\n"+
		"mcpspy: export: %s: salvaged 9 messages in 2 sessions; lost what the last commit (txid %d) wrote, listed above\n",
		path, newestTxid, newestRoot, beforeTxid, path, newestTxid)
	if code != 1 || stderr != wantErr {
		t.Errorf("export --salvage: exit %d, stderr\n%s\nwant exit 1 and\n%s", code, stderr, wantErr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(wantOut)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("salvaged\n%s\nwant what the commit before the last held:\n%s", got, want)
	}
}

// recordTwoCommits records two small sessions, copies the file as that
// commit left it (before), then commits a large batch, whose root is
// appended past the pages before it, and closes the recording (path).
func recordTwoCommits(t *testing.T) (path, before string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "rec.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true, CommitInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	var sessions []*store.Session
	commit := func(perSession, size int) {
		for i, s := range sessions {
			for q := range perSession {
				frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"s%d #%d %s"}}`, i, q, strings.Repeat("y", size))
				s.Append(store.S2C, start.Add(time.Duration(q)*time.Millisecond), []byte(frame), nil)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "server", Start: start})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		commit(3, 20)
	}
	// The file as the commit before the last left it, to compare with.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before = filepath.Join(dir, "before.db")
	if err := os.WriteFile(before, data, 0o600); err != nil {
		t.Fatal(err)
	}
	commit(200, 400) // large: its root is appended past the pages before it
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, before
}
