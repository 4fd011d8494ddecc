package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// metaPages reads both meta pages of the cassette at path as the test
// needs them: each commit's txid, root page and high water mark (every
// page of that commit's tree lies below it), and the page size.
type testMeta struct{ txid, root, highWater uint64 }

func metaPages(t *testing.T, path string) (newest, before testMeta, pageSize uint64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize = uint64(native.Uint32(data[pageHeaderSize+8:]))
	var m [2]testMeta
	for i := range m {
		b := data[uint64(i)*pageSize+pageHeaderSize:]
		m[i] = testMeta{txid: native.Uint64(b[metaTxidAt:]), root: native.Uint64(b[metaRootAt:]), highWater: native.Uint64(b[40:])}
	}
	if m[1].txid > m[0].txid {
		return m[1], m[0], pageSize
	}
	return m[0], m[1], pageSize
}

// olderCommitCassette records, with the Writer, several batches into a
// new cassette, each its own commit, the last one large (so that the
// pages it writes use up the free ones and its root is appended past
// every page of the commit before it, as a recorder's growing file
// does). It returns the cassette, the export of the commit before the
// last, and both commits' meta pages.
func olderCommitCassette(t *testing.T) (path, beforeExport string, newest, before testMeta, pageSize uint64) {
	t.Helper()
	// The writer's commit loop, kicked by the first append, may run late
	// and commit part of a later batch on its own: the last two commits
	// are then not the last two batches, and the file is no case to
	// test. Make another.
	for attempt := 1; ; attempt++ {
		var ok bool
		if path, beforeExport, newest, before, pageSize, ok = recordOlderCommit(t, attempt == 10); ok {
			return path, beforeExport, newest, before, pageSize
		}
	}
}

// recordOlderCommit is one attempt of olderCommitCassette: ok false when
// the last two commits are not the last two batches, which fails the
// test when last.
func recordOlderCommit(t *testing.T, last bool) (path, beforeExport string, newest, before testMeta, pageSize uint64, ok bool) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "c.db")
	w, err := NewWriter(path, WriterOptions{NoSync: true, CommitInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	var sessions []*Session
	snapshots := map[uint64]string{} // by the txid of the commit copied
	batch := func(newSession bool, perSession, size int) {
		if newSession {
			s, err := w.NewSession(SessionInfo{Transport: TransportStdio, Upstream: "server", Start: start.Add(time.Duration(len(sessions)) * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			sessions = append(sessions, s)
		}
		for i, s := range sessions {
			for q := range perSession {
				frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"s%d batch %d #%d %s"}}`, i, len(snapshots), q, strings.Repeat("x", size))
				s.Append(S2C, start.Add(time.Duration(len(snapshots)*1000+q)*time.Millisecond), []byte(frame), nil)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		// A copy of the file as this commit left it, exported once the
		// writer, which holds the file, is closed.
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		snapshot := filepath.Join(filepath.Dir(path), fmt.Sprintf("batch%d.db", len(snapshots)))
		if err := os.WriteFile(snapshot, data, 0o600); err != nil {
			t.Fatal(err)
		}
		newest, _, _ := metaPages(t, path)
		snapshots[newest.txid] = snapshot
	}
	batch(true, 3, 20)
	batch(true, 4, 20)
	batch(true, 2, 20)
	batch(false, 200, 400) // the last, large commit
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	newest, before, pageSize = metaPages(t, path)
	snapshot, beforeCopied := snapshots[before.txid]
	if _, newestCopied := snapshots[newest.txid]; !beforeCopied || !newestCopied {
		if last {
			t.Fatalf("the meta pages name commits %d and %d, not the last two batches (%v)", before.txid, newest.txid, snapshots)
		}
		return path, "", newest, before, pageSize, false
	}
	var out bytes.Buffer
	if err := Export(snapshot, &out, nil); err != nil {
		t.Fatal(err)
	}
	return path, out.String(), newest, before, pageSize, true
}

// salvageCommitBefore salvages the cassette at path, which should give
// want, the export of the commit before the last.
func salvageCommitBefore(t *testing.T, path, want string) *SalvageReport {
	t.Helper()
	var out bytes.Buffer
	rep, err := Salvage(path, &out, nil)
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	if out.String() != want {
		t.Errorf("salvaged\n%s\nwant the commit before the last:\n%s", out.String(), want)
	}
	return rep
}

// A cut that took the root of the last commit's tree, but none of the
// pages of the commit before it, is salvaged as that commit: what it held
// comes back exactly, and the report says which commit was read and that
// what the last one wrote is lost. ls and the like say the commit before
// is still there, and do not say that nothing can be salvaged.
func TestSalvage_CutPastTheLastRootReadsTheCommitBefore(t *testing.T) {
	path, want, newest, before, pageSize := olderCommitCassette(t)
	if newest.root < before.highWater {
		t.Fatalf("the last commit's root (page %d) lies among the pages of the one before (below page %d): this cassette does not show the case", newest.root, before.highWater)
	}
	// Every page of the commit before lies below its high water mark.
	if err := os.Truncate(path, int64(before.highWater*pageSize)); err != nil {
		t.Fatal(err)
	}
	rep := salvageCommitBefore(t, path, want)
	wantFallback := CommitFallback{Read: before.txid, Lost: newest.txid, LostRoot: newest.root}
	if rep.Fallback == nil || *rep.Fallback != wantFallback {
		t.Errorf("fallback %v, want %v", rep.Fallback, wantFallback)
	}
	if rep.Fallback != nil {
		said := rep.Fallback.String()
		for _, part := range []string{fmt.Sprintf("salvaged the commit before it (txid %d)", before.txid), fmt.Sprintf("last commit's tree (txid %d, page %d)", newest.txid, newest.root), "what the last commit wrote is lost"} {
			if !strings.Contains(said, part) {
				t.Errorf("fallback says %q, want %q in it", said, part)
			}
		}
	}
	if len(rep.Lost) != 0 || rep.Sessions != 3 {
		t.Errorf("report: %d sessions, lost %v; want 3 sessions and no loss below the commit read", rep.Sessions, rep.Lost)
	}
	err := View(path, func(*Reader) error { return nil })
	wantView := fmt.Sprintf("the cut took the root of its last commit's tree (txid %d, page %d, at byte %d); the commit before it (txid %d) is still in the file", newest.txid, newest.root, newest.root*pageSize, before.txid)
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsalvageable) || !strings.Contains(err.Error(), wantView) {
		t.Errorf("view: %v, want %v (not %v) saying %q", err, ErrCorrupt, ErrUnsalvageable, wantView)
	}
}

// A cut that took the roots of both commits leaves nothing to read, as
// every page is found from a root: Salvage says so, and why, before it
// reads a page, and every other read of the file says the same, so that
// none points at Salvage for it.
func TestSalvage_CutPastBothRoots(t *testing.T) {
	path, _, newest, before, pageSize := olderCommitCassette(t)
	cut := min(newest.root, before.root)
	if err := os.Truncate(path, int64(cut*pageSize)); err != nil {
		t.Fatal(err)
	}
	_, err := Salvage(path, new(bytes.Buffer), nil)
	want := fmt.Sprintf("and the cut took the root of its tree (page %d, at byte %d): nothing in it can be salvaged", newest.root, newest.root*pageSize)
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrUnsalvageable) || !strings.Contains(err.Error(), want) {
		t.Errorf("salvage: %v, want %v saying %q", err, ErrUnsalvageable, want)
	}
	err = View(path, func(*Reader) error { return nil })
	if !errors.Is(err, ErrUnsalvageable) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
		t.Errorf("view: %v, want %v naming %s and saying %q", err, ErrUnsalvageable, path, want)
	}
}

// A root page of the last commit damaged in a whole file (zeroed, as by a
// disk fault) leaves nothing of that commit's tree to read; the commit
// before it is read instead, whole, and the report says so.
func TestSalvage_DamagedLastRootReadsTheCommitBefore(t *testing.T) {
	path, want, newest, before, pageSize := olderCommitCassette(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clear(data[newest.root*pageSize : (newest.root+1)*pageSize])
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := salvageCommitBefore(t, path, want)
	wantFallback := CommitFallback{Read: before.txid, Lost: newest.txid, LostRoot: newest.root, Damaged: true}
	if rep.Fallback == nil || *rep.Fallback != wantFallback {
		t.Errorf("fallback %v, want %v", rep.Fallback, wantFallback)
	} else if said := rep.Fallback.String(); !strings.HasPrefix(said, fmt.Sprintf("the root page of the last commit's tree is damaged (txid %d, page %d): salvaged the commit before it (txid %d)", newest.txid, newest.root, before.txid)) {
		t.Errorf("fallback says %q", said)
	}
}
