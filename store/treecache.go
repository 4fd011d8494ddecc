package store

import (
	"os"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Viewer reads one cassette again and again, each time in a View of its
// own as View does (a long-lived handle would stall recorders), but walks
// the file's page tree (checkTree) only when the snapshot changed since
// the last walk: the inspector fetches every message it shows this way,
// and on a million messages the walk took ~5 ms a fetch.
//
// A snapshot is the file (os.SameFile), its size and modification time,
// and the transaction id on its meta page. While the meta names the same
// transaction, the pages its tree reaches are the same: a writer writes
// only pages that tree does not reach, and each commit makes a new
// transaction id. A file replaced by another is another file; one cut
// short or written in place has another size or time (damage written in
// place within the file system's timestamp granularity of a walk, by
// something other than bbolt, goes unseen until the next commit). Use
// View for a single read; a Viewer is safe for concurrent use.
type Viewer struct {
	path string
	walk func(path string, file *os.File, tx *bolt.Tx, loose bool) error // checkTree; tests count
	mu   sync.Mutex
	last snapshot // the last snapshot walk found whole
}

type snapshot struct {
	file os.FileInfo
	txid uint64
}

// NewViewer returns a Viewer of the cassette at path.
func NewViewer(path string) *Viewer { return &Viewer{path: path, walk: checkTree} }

// View is View(path, fn) with the tree walked once per snapshot.
func (v *Viewer) View(fn func(r *Reader) error) error {
	return viewChecked(v.path, v.checkTree, func(tx *bolt.Tx) error { return fn(&Reader{path: v.path, tx: tx}) })
}

func (v *Viewer) checkTree(path string, file *os.File, tx *bolt.Tx) error {
	st, err := file.Stat()
	if err != nil {
		return v.walk(path, file, tx, false)
	}
	now := snapshot{file: st, txid: uint64(tx.ID())}
	v.mu.Lock()
	same := v.last.same(now)
	v.mu.Unlock()
	if same {
		return nil
	}
	if err := v.walk(path, file, tx, false); err != nil {
		return err
	}
	v.mu.Lock()
	v.last = now
	v.mu.Unlock()
	return nil
}

func (s snapshot) same(o snapshot) bool {
	return s.file != nil && o.file != nil && s.txid == o.txid &&
		s.file.Size() == o.file.Size() && s.file.ModTime().Equal(o.file.ModTime()) && os.SameFile(s.file, o.file)
}
