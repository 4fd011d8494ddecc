package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A Viewer walks the page tree once per snapshot: again after a commit,
// after the file was written in place, and for a file put in its place;
// and a damaged tree is still refused.
func TestViewer_WalksEachSnapshotOnce(t *testing.T) {
	path := importTape(t, markedTape(400))
	v := NewViewer(path)
	var walks atomic.Int64
	v.walk = func(path string, file *os.File, tx *bolt.Tx, loose bool) error {
		walks.Add(1)
		return checkTree(path, file, tx, loose)
	}
	read := func() error {
		return within(t, "a Viewer's View", func() error {
			return v.View(func(r *Reader) error {
				_, err := r.Message("s1", 1)
				return err
			})
		})
	}
	expect := func(step string, want int64) {
		t.Helper()
		if err := read(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := walks.Load(); got != want {
			t.Errorf("%s: %d walks of the tree in all, want %d", step, got, want)
		}
	}
	expect("first view", 1)
	expect("the same snapshot again", 1)
	expect("and again", 1)

	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"x"}`), nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	expect("after a commit", 2)
	expect("the new snapshot again", 2)

	// Written in place, not by bbolt: the same transaction id and size.
	// The time is set apart from the walk's, which a file system's coarse
	// clock might not do within a test's few milliseconds.
	data, branches := branchPages(t, path)
	loop := widest(t, branches)
	pointChild(t, path, data, loop, 1, uint64(loop))
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	err = read()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "loop back to it") {
		t.Fatalf("after damage in place: %v, want %v saying the pointers loop", err, ErrCorrupt)
	}
	if got := walks.Load(); got != 3 {
		t.Errorf("after damage in place: %d walks in all, want 3", got)
	}

	// Another file put in its place, whole.
	good := importTape(t, markedTape(400))
	if err := os.Rename(good, filepath.Clean(path)); err != nil {
		t.Fatal(err)
	}
	expect("a file renamed into its place", 4)
	expect("that file again", 4)
}
