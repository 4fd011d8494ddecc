package store

import (
	"fmt"
	"hash/fnv"
	"os"
)

// Salvage reads the commit before the last when a cut took the root of
// the last one's tree, or the root page is damaged (not the branch or
// leaf page its meta page names). bbolt keeps two meta pages, 0 and 1, and each
// commit writes the one the commit before it did not, so the other names
// the tree of the commit before. That tree stays whole on disk until a
// later commit reuses its pages (the last commit cannot: a page it frees
// is reusable only from the commit after it), and a cut usually takes the
// end of the file, where the last commit appended its pages. Salvage then
// works on a private copy of the file in which the last commit's meta page
// fails its checksum, so that bbolt opens the commit before it; what the
// last commit wrote is lost, and the report says so.

// The meta page of bbolt v1 (native byte order), after the page header:
// magic u32, version u32, page size u32, flags u32, the root bucket (root
// pgid u64, sequence u64), freelist pgid u64, high water mark pgid u64,
// txid u64, and a 64-bit FNV-1a checksum of the 56 bytes before it.
const (
	metaRootAt     = 16
	metaTxidAt     = 48
	metaChecksumAt = 56
	metaBodySize   = 64
)

// commitMeta is what one meta page says of its commit.
type commitMeta struct {
	page       uint64 // 0 or 1
	txid, root uint64
	valid      bool // its magic and checksum hold
	// rootWhole: the root page is in the file, and its header is of a
	// branch or leaf page with the root's id, as bbolt checks.
	rootWhole bool
}

// CommitFallback says that Salvage read the commit before the last: the
// cut took the root of the last commit's tree.
type CommitFallback struct {
	Read     uint64 // the txid of the commit read
	Lost     uint64 // the txid of the last commit, whose records are lost
	LostRoot uint64 // the page of the last commit's root
	// Damaged: the last root page is in the file but damaged; else the
	// cut took it.
	Damaged bool
}

func (f CommitFallback) String() string {
	what := "the cut took the root of the last commit's tree"
	if f.Damaged {
		what = "the root page of the last commit's tree is damaged"
	}
	return fmt.Sprintf("%s (txid %d, page %d): salvaged the commit before it (txid %d); what the last commit wrote is lost, how much is not known",
		what, f.Lost, f.LostRoot, f.Read)
}

// readMetas reads both meta pages of the file at path, and its page
// size, which meta page 0 gives. ok is false when meta page 0 does not
// hold: bbolt then has no choice of commit to make, nor Salvage.
func readMetas(path string) (metas [2]commitMeta, pageSize, size uint64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return metas, 0, 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return metas, 0, 0, false
	}
	v := fileView{f: f, size: uint64(st.Size())}
	read := func(id, pageSize uint64) commitMeta {
		m := commitMeta{page: id}
		b := v.at(id*pageSize+pageHeaderSize, metaBodySize)
		if len(b) < metaBodySize || native.Uint32(b) != bboltMagic {
			return m
		}
		h := fnv.New64a()
		h.Write(b[:metaChecksumAt])
		m.valid = h.Sum64() == native.Uint64(b[metaChecksumAt:])
		m.txid, m.root = native.Uint64(b[metaTxidAt:]), native.Uint64(b[metaRootAt:])
		return m
	}
	metas[0] = read(0, 0)
	if !metas[0].valid {
		return metas, 0, v.size, false
	}
	head := v.at(pageHeaderSize, 12)
	pageSize = uint64(native.Uint32(head[8:]))
	if pageSize == 0 {
		return metas, 0, v.size, false
	}
	metas[1] = read(1, pageSize)
	for i := range metas {
		m := &metas[i]
		if m.root < v.size/pageSize { // not (root+1)×pageSize: a damaged root would wrap round
			h := v.at(m.root*pageSize, pageHeaderSize)
			flags := native.Uint16(h[8:])
			m.rootWhole = native.Uint64(h) == m.root && (flags == branchPage || flags == leafPage)
		}
	}
	return metas, pageSize, v.size, true
}

// olderCommit is, for the file at path, the commit Salvage should read in
// place of the last when the cut took the last one's root or damaged it,
// and the offset of the last one's checksum: nil when the last root is
// whole (or no other commit can stand in for it: then rootCut says
// nothing can be salvaged).
func olderCommit(path string) (fallback *CommitFallback, lastChecksumAt int64) {
	metas, pageSize, size, ok := readMetas(path)
	if !ok || !metas[1].valid {
		return nil, 0
	}
	last, before := metas[0], metas[1]
	if before.txid > last.txid {
		last, before = before, last
	}
	if last.rootWhole || !before.rootWhole || before.txid >= last.txid {
		return nil, 0
	}
	return &CommitFallback{Read: before.txid, Lost: last.txid, LostRoot: last.root, Damaged: last.root < size/pageSize},
		int64(last.page*pageSize + pageHeaderSize + metaChecksumAt)
}

// readOlderCommit returns the file Salvage should read for path: path
// itself, or, when the cut took the last commit's root and the commit
// before it is there, a private copy whose last meta page fails its
// checksum, which cleanup removes.
func readOlderCommit(path string) (src string, fallback *CommitFallback, cleanup func(), err error) {
	fallback, at := olderCommit(path)
	if fallback == nil {
		return path, nil, func() {}, nil
	}
	if src, err = privateCopy(path); err != nil {
		return "", nil, func() {}, fmt.Errorf("salvage %s: %w", path, err)
	}
	cleanup = func() { os.Remove(src) }
	f, err := os.OpenFile(src, os.O_RDWR, 0)
	if err == nil {
		var b [8]byte
		if _, err = f.ReadAt(b[:], at); err == nil {
			native.PutUint64(b[:], ^native.Uint64(b[:])) // a checksum that cannot hold
			_, err = f.WriteAt(b[:], at)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, func() {}, fmt.Errorf("salvage %s: %w", path, err)
	}
	return src, fallback, cleanup, nil
}
