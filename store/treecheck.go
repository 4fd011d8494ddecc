package store

import (
	"encoding/binary"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// checkTree walks the page tree of tx's snapshot of the cassette at path,
// reading file itself, and refuses a tree that bbolt
// could not read safely. bbolt follows page pointers without checking
// them: a child pointer damaged into a loop sends it round until it runs
// out of memory or overflows its stack, and no recover reaches either.
//
// Strict (every read and write), the tree must be a tree: every page
// reached once, from a pointer inside the tree's pages, branch or leaf,
// its elements inside it. Anything else is ErrCorrupt, naming the page.
//
// Loose (Salvage, which reads past damage), only a loop is an error; the
// walk goes where bbolt would (see looseNode).
//
// Strict, it reads the freelist, the branch pages, the leaves that hold
// buckets, and the headers of the first and last leaf under each branch;
// not keys, values, or the other leaves that hold records (most of the
// file: see unreadLeaf).
// On 200k messages that is a fifth of a millisecond (BenchmarkCheckTree).
// Loose, it reads every page a pointer leads to. It reads with pread, not
// through a mapping, whose pages would count as the process's memory.
func checkTree(path string, file *os.File, tx *bolt.Tx, loose bool) error {
	pageSize := int64(tx.DB().Info().PageSize)
	size := tx.Size()
	if st, err := file.Stat(); err == nil && (loose || st.Size() < size) {
		// Loose, the whole file: bbolt follows a damaged pointer past
		// the tree's last page as readily as into it.
		size = st.Size()
	}
	size -= size % pageSize
	if size <= 0 {
		return nil
	}
	w := &treeWalk{fileView: fileView{f: file, size: uint64(size)}, pageSize: uint64(pageSize), pages: uint64(size / pageSize), loose: loose}
	for d := range w.entered {
		w.entered[d], w.finished[d] = newPageSet(w.pages), newPageSet(w.pages)
	}
	w.reached = newPageSet(w.pages)
	root, err := w.rootOf(uint64(tx.ID()))
	if err == nil {
		err = w.walk(root)
	}
	if err != nil {
		return fmt.Errorf("%s: %w: %w", path, ErrCorrupt, err)
	}
	return nil
}

// pageLoop is a loop of page pointers back to page to; element elem of
// page from is the pointer in it that Salvage cuts (see treeWalk.loop).
type pageLoop struct{ from, elem, to, pageSize uint64 }

func (l *pageLoop) Error() string {
	return fmt.Sprintf("page %d is its own descendant: the page pointers below it loop back to it (through element %d of page %d)", l.to, l.elem, l.from)
}

// The page format of bbolt v1 (native byte order): a 16-byte header (id
// u64, flags u16, count u16, overflow u32), then count 16-byte elements.
// A branch element is pos u32, ksize u32, child pgid u64; a leaf element
// is flags u32, pos u32, ksize u32, vsize u32, where pos counts from the
// element itself. A bucket's value starts with its root pgid (u64) and
// sequence (u64); root 0 means the bucket's one leaf page follows inline.
const (
	pageHeaderSize  = 16
	pageElementSize = 16
	bucketHeader    = 16

	branchPage   = 0x01
	leafPage     = 0x02
	metaPage     = 0x04
	freelistPage = 0x10

	bucketElement = 0x01
)

var native = binary.NativeEndian

// maxBucketDepth is how deep the cassette's buckets nest: the root bucket
// holds the top-level buckets (meta, sessions, messages, index, blobs),
// which hold one bucket per session, which holds records only. Reads
// open no bucket deeper, so the walk does not look for any (and reads
// no element of the leaves that hold records).
const maxBucketDepth = 2

// fileView reads a file's bytes at any offset below size.
type fileView struct {
	f    *os.File
	size uint64
}

// at returns the n bytes at off, fewer where the view ends (none past it).
func (v fileView) at(off, n uint64) []byte {
	if off >= v.size {
		return nil
	}
	b := make([]byte, min(n, v.size-off))
	k, _ := v.f.ReadAt(b, int64(off))
	return b[:k]
}

// u64 is the native uint64 at off, ok false past the view's end.
func (v fileView) u64(off uint64) (uint64, bool) {
	b := v.at(off, 8)
	if len(b) < 8 {
		return 0, false
	}
	return native.Uint64(b), true
}

type treeWalk struct {
	fileView
	pageSize uint64
	pages    uint64 // in the view
	loose    bool
	// A page is entered when the walk reaches it and finished when all
	// below it has been walked, per bucket depth: reaching an entered,
	// unfinished page again is a loop.
	entered, finished [maxBucketDepth + 1]pageSet
	// reached is every page reached at any depth (strict: a page is in
	// one bucket, once).
	reached pageSet
	// free is the freelist's pages with the pages it lists (strict; nil
	// when unknown).
	free pageSet
}

// rootOf reads the root bucket's page from the meta page of transaction
// txid (bbolt keeps two meta pages and uses the newer valid one).
func (w *treeWalk) rootOf(txid uint64) (uint64, error) {
	for id := range uint64(2) {
		meta := w.at(id*w.pageSize+pageHeaderSize, 64)
		if len(meta) < 64 {
			break
		}
		if native.Uint64(meta[48:]) == txid { // magic, version, page size, flags, root (16), freelist, high water mark, txid
			if !w.loose {
				w.readFreelist(native.Uint64(meta[32:]))
			}
			return native.Uint64(meta[16:]), nil
		}
	}
	return 0, fmt.Errorf("neither meta page is of transaction %d", txid)
}

// node is a page on the walk's path, with the pages below it.
type node struct {
	id       uint64
	depth    int      // of the bucket the page belongs to
	kids     []uint64 // pages below: its children, or the roots of its buckets
	kidDepth int
	elements bool // kids[i] is the pointer in element i
	// bottom: a branch of a session's bucket whose first and last
	// children are leaves; the others are taken for leaves unread (see
	// unreadLeaf).
	bottom bool
	next   int
}

// walk visits, depth first, every page of the bucket tree rooted at root
// and of every bucket nested in it down to maxBucketDepth.
func (w *treeWalk) walk(root uint64) error {
	var path []node
	enter := func(id uint64, depth int) error {
		if id < w.pages && w.entered[depth].has(id) {
			if !w.finished[depth].has(id) {
				return w.loop(path, id)
			}
			if w.loose {
				return nil // walked already
			}
			return fmt.Errorf("page %d is reached twice (a damaged pointer)", id)
		}
		n := node{id: id, depth: depth}
		var err error
		if w.loose {
			err = w.looseNode(&n)
		} else {
			err = w.strictNode(&n)
		}
		if err != nil || n.id >= w.pages {
			return err
		}
		w.entered[depth].set(id)
		path = append(path, n)
		return nil
	}
	if err := enter(root, 0); err != nil {
		return err
	}
	for len(path) > 0 {
		n := &path[len(path)-1]
		if n.next == len(n.kids) {
			w.finished[n.depth].set(n.id)
			path = path[:len(path)-1]
			continue
		}
		kid := n.kids[n.next]
		n.next++
		var err error
		switch {
		case n.bottom && n.next > 1 && kid < w.pages && w.entered[n.depth].has(kid) && !w.finished[n.depth].has(kid):
			err = w.loop(path, kid)
		case n.bottom && n.next > 1:
			err = w.unreadLeaf(kid)
		default:
			err = enter(kid, n.kidDepth)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loop describes the loop that reaching page to again from the end of
// path closes, naming the pointer Salvage should cut: the last one in the
// loop that lies in a page of its own (not a meta page, which holds the
// file's root: a loop can run through one, read as a branch). Every page
// in the loop is a branch by bbolt's reading: a bucket's root is a page
// of the next depth down, so no loop runs through one.
func (w *treeWalk) loop(path []node, to uint64) error {
	l := &pageLoop{to: to, pageSize: w.pageSize}
	for j := len(path) - 1; j >= 0; j-- {
		if n := path[j]; n.elements && n.id >= 2 && l.from == 0 {
			l.from, l.elem = n.id, uint64(n.next-1)
		}
		if path[j].id == to {
			break
		}
	}
	if l.from == 0 {
		return fmt.Errorf("page %d loops back to itself through the meta pages alone", to)
	}
	return l
}

// strictNode reads the page of a tree that must be whole: inside the
// tree's pages, a branch or a leaf, its elements inside it.
func (w *treeWalk) strictNode(n *node) error {
	id := n.id
	if id < 2 || id >= w.pages {
		return fmt.Errorf("a pointer to page %d, outside the tree's pages 2…%d", id, w.pages-1)
	}
	off := id * w.pageSize
	head := w.at(off, pageHeaderSize)
	if len(head) < pageHeaderSize {
		return fmt.Errorf("page %d cannot be read", id)
	}
	flags, count, overflow := native.Uint16(head[8:]), uint64(native.Uint16(head[10:])), uint64(native.Uint32(head[12:]))
	if own := native.Uint64(head); own != id {
		return fmt.Errorf("page %d identifies itself as page %d", id, own)
	}
	if overflow >= w.pages-id {
		return fmt.Errorf("page %d runs past the tree's end", id)
	}
	end := off + (overflow+1)*w.pageSize
	if off+pageHeaderSize+count*pageElementSize > end {
		return fmt.Errorf("page %d claims %d elements, more than it holds", id, count)
	}
	for p := id; p <= id+overflow; p++ { // with its overflow: no other pointer may reach them
		if w.reached.has(p) {
			return fmt.Errorf("page %d is reached twice (a damaged pointer)", p)
		}
		w.reached.set(p)
	}
	switch {
	case flags == branchPage && count == 0:
		return fmt.Errorf("branch page %d is empty", id)
	case flags == branchPage:
		n.kids, n.kidDepth, n.elements = make([]uint64, count), n.depth, true
		elems := w.at(off+pageHeaderSize, count*pageElementSize)
		if uint64(len(elems)) < count*pageElementSize {
			return fmt.Errorf("page %d cannot be read", id)
		}
		for i := range count {
			n.kids[i] = native.Uint64(elems[i*pageElementSize+8:])
		}
		// Its first and last children both leaves: a bottom branch. One
		// damaged pointer cannot make a branch of branches look like one
		// and hide the subtrees between.
		n.bottom = n.depth == maxBucketDepth && w.free != nil && w.isLeaf(n.kids[0]) && w.isLeaf(n.kids[count-1])
		return nil
	case flags == leafPage && n.depth < maxBucketDepth:
		var err error
		n.kids, err = w.bucketRoots(id, region{off, w.at(off, end-off)}, count)
		n.kidDepth = n.depth + 1
		return err
	case flags == leafPage:
		return nil
	}
	return fmt.Errorf("page %d has flags %#x where a branch or leaf page belongs", id, flags)
}

// isLeaf says whether page id is a leaf by its header.
func (w *treeWalk) isLeaf(id uint64) bool {
	if id >= w.pages {
		return false
	}
	head := w.at(id*w.pageSize, pageHeaderSize)
	return len(head) == pageHeaderSize && native.Uint64(head) == id && native.Uint16(head[8:]) == leafPage
}

// unreadLeaf checks, without reading it, a child of a bottom branch
// (node.bottom): its first and last siblings are leaves, so it should be
// one too. A leaf has no pointers, so what matters is that it is not a
// page bbolt would take for a branch: not a page of the tree reached
// already or later (the reached set says so), not a meta page, not a free
// or pending page (the freelist says so: stale pages hold old pointers),
// and inside the tree. Every other page below the high-water mark is a page of the tree
// or part of one, which bbolt's header check refuses to read as anything
// but itself. Reading every leaf's header instead cost a read per 4 KiB
// of the file, in every open.
func (w *treeWalk) unreadLeaf(id uint64) error {
	switch {
	case id < 2 || id >= w.pages:
		return fmt.Errorf("a pointer to page %d, outside the tree's pages 2…%d", id, w.pages-1)
	case w.reached.has(id):
		return fmt.Errorf("page %d is reached twice (a damaged pointer)", id)
	case w.free.has(id):
		return fmt.Errorf("a pointer to page %d, a free page", id)
	}
	w.reached.set(id)
	return nil
}

// readFreelist reads the free and pending pages that the freelist at page
// id lists, and marks the freelist's own pages as not the tree's. It
// leaves w.free nil when the file keeps no freelist (bbolt's
// NoFreelistSync) or it cannot be read: every page is then read.
func (w *treeWalk) readFreelist(id uint64) {
	if id < 2 || id >= w.pages {
		return
	}
	head := w.at(id*w.pageSize, pageHeaderSize)
	if len(head) < pageHeaderSize || native.Uint64(head) != id || native.Uint16(head[8:]) != freelistPage {
		return
	}
	overflow := uint64(native.Uint32(head[12:]))
	page := w.at(id*w.pageSize, (overflow+1)*w.pageSize)
	count, ids := uint64(native.Uint16(head[10:])), page[pageHeaderSize:]
	if count == 0xFFFF { // the count overflowed into the first element
		if len(ids) < 8 {
			return
		}
		count, ids = native.Uint64(ids), ids[8:]
	}
	if count > uint64(len(ids))/8 {
		return
	}
	free := newPageSet(w.pages)
	for i := range count {
		if p := native.Uint64(ids[i*8:]); p < w.pages {
			free.set(p)
		}
	}
	for p := id; p <= id+overflow && p < w.pages; p++ {
		free.set(p)
	}
	w.free = free
}

// looseNode reads a page as bbolt would, wherever a damaged pointer led:
// inside the file, but maybe past the tree's pages. bbolt reads a page
// only if its header names it (its own id, one known type): anything
// else, a zeroed page, one past the file's end, is a panic (recovered),
// with nothing below it. A leaf may hold buckets. Any other page, a meta
// or freelist page too, is taken for a branch by Cursor.First and Next
// (and by Seek when flagged one), which follow its elements 0 … count-1
// as child pointers, element 0 when its count is 0, reading them from
// the pages that follow when the count claims more than the page holds.
//
// Cursor.Last follows element count-1, which for a count of 0 wraps to
// element 65535, a megabyte on; Salvage does not call it on a page tree
// (lastKey stands in), so the walk does not follow that.
func (w *treeWalk) looseNode(n *node) error {
	if n.id >= w.pages {
		return nil
	}
	off := n.id * w.pageSize
	head := w.at(off, pageHeaderSize)
	if len(head) < pageHeaderSize {
		return nil
	}
	flags, count := native.Uint16(head[8:]), uint64(native.Uint16(head[10:]))
	if native.Uint64(head) != n.id || !validPageType(flags) {
		return nil
	}
	// The elements, as far as the count claims and the file goes.
	elems := w.at(off+pageHeaderSize, max(count, 1)*pageElementSize)
	if flags == leafPage {
		if n.depth < maxBucketDepth {
			n.kids, _ = w.bucketRoots(n.id, region{off, append(head, elems...)}, count)
			n.kidDepth = n.depth + 1
		}
		return nil
	}
	n.kidDepth, n.elements = n.depth, true
	for i := uint64(0); i < max(count, 1) && (i+1)*pageElementSize <= uint64(len(elems)); i++ {
		n.kids = append(n.kids, native.Uint64(elems[i*pageElementSize+8:])) // past the file's end, bbolt's read faults
	}
	return nil
}

// validPageType is bbolt's test of a page's flags: one known type.
func validPageType(flags uint16) bool {
	return flags == branchPage || flags == leafPage || flags == metaPage || flags == freelistPage
}

// region is bytes of the file read at off.
type region struct {
	off  uint64
	data []byte
}

// bytes returns n bytes at the file's offset at: from r if it holds them,
// else (loose: a damaged offset may point anywhere) read from the file.
func (w *treeWalk) bytes(r region, at, n uint64) []byte {
	if at >= r.off && at+n <= r.off+uint64(len(r.data)) {
		return r.data[at-r.off : at-r.off+n]
	}
	if !w.loose {
		return nil
	}
	return w.at(at, n)
}

// bucketRoots returns the root pages of the buckets stored in the leaf
// page id read into r. Strict, its elements and their values must lie in
// r. Inline buckets, which have no pages of their own, are checked where
// they are.
func (w *treeWalk) bucketRoots(id uint64, r region, count uint64) ([]uint64, error) {
	var roots []uint64
	for i := range count {
		at := r.off + pageHeaderSize + i*pageElementSize
		elem := w.bytes(r, at, pageElementSize)
		if len(elem) < pageElementSize {
			if !w.loose {
				return nil, fmt.Errorf("page %d: element %d of %d lies outside the page", id, i+1, count)
			}
			break // loose: bbolt's read of the rest faults, recovered
		}
		if native.Uint32(elem)&bucketElement == 0 {
			continue
		}
		vstart := at + uint64(native.Uint32(elem[4:])) + uint64(native.Uint32(elem[8:]))
		vsize := uint64(native.Uint32(elem[12:]))
		value := w.bytes(r, vstart, vsize)
		switch {
		case uint64(len(value)) < vsize || vsize < bucketHeader:
			if !w.loose {
				return nil, fmt.Errorf("page %d: bucket %d of %d lies outside the page", id, i+1, count)
			}
		case native.Uint64(value) != 0:
			roots = append(roots, native.Uint64(value))
		case vsize < bucketHeader+pageHeaderSize:
			if !w.loose {
				return nil, fmt.Errorf("page %d: inline bucket %d of %d is cut short", id, i+1, count)
			}
		default:
			if err := w.inline(id, i, count, region{vstart + bucketHeader, value[bucketHeader:]}); err != nil {
				return nil, err
			}
		}
	}
	return roots, nil
}

// inline checks the inline bucket stored in element i of page id, a page
// of its own read into r. Strict, it must be a leaf whose elements lie
// inside it (its records are not read). Loose, only one thing loops:
// every page of an inline bucket is page 0, itself, so a branch there
// whose child pointer is 0 is its own child.
func (w *treeWalk) inline(id, i, count uint64, r region) error {
	flags, n := native.Uint16(r.data[8:]), uint64(native.Uint16(r.data[10:]))
	if !w.loose {
		if flags != leafPage {
			return fmt.Errorf("page %d: inline bucket %d of %d is not a leaf", id, i+1, count)
		}
		if pageHeaderSize+n*pageElementSize > uint64(len(r.data)) {
			return fmt.Errorf("page %d: inline bucket %d of %d claims %d elements, more than it holds", id, i+1, count, n)
		}
		return nil
	}
	if flags == leafPage {
		return nil
	}
	// Cursor.First, Next and Seek follow elements 0 … n-1 (element 0 when
	// n is 0); Last, which Salvage calls on an inline bucket, element
	// n-1, which for n = 0 wraps to 65535.
	elems := []uint64{}
	for j := range max(n, 1) {
		elems = append(elems, j)
	}
	if n == 0 {
		elems = append(elems, 1<<16-1)
	}
	for _, j := range elems {
		if pgid, ok := w.u64(r.off + pageHeaderSize + j*pageElementSize + 8); ok && pgid == 0 {
			return fmt.Errorf("page %d: inline bucket %d of %d is a branch that loops back to itself", id, i+1, count)
		}
	}
	return nil
}

// pageSet is a bit per page.
type pageSet []uint64

func newPageSet(pages uint64) pageSet { return make(pageSet, (pages+63)/64) }

func (s pageSet) has(id uint64) bool { return s[id/64]&(1<<(id%64)) != 0 }
func (s pageSet) set(id uint64)      { s[id/64] |= 1 << (id % 64) }

// lastKey is the last key of the bucket tree rooted at page root of the
// file v reads, found as Cursor.Last finds it (the last element of each
// page down), but only through pages that are what they say (a branch or
// a leaf with elements, its own id in its header), each once, the key
// inside the file: nil where bbolt would have gone astray or round.
// Salvage uses it where it would call Cursor.Last on a damaged tree (see
// looseNode).
func lastKey(v fileView, pageSize, root uint64) []byte {
	seen := map[uint64]bool{}
	for id := root; ; {
		off := id * pageSize
		if id < 2 || seen[id] || off/pageSize != id {
			return nil
		}
		seen[id] = true
		head := v.at(off, pageHeaderSize)
		if len(head) < pageHeaderSize || native.Uint64(head) != id {
			return nil
		}
		flags, count := native.Uint16(head[8:]), uint64(native.Uint16(head[10:]))
		if count == 0 {
			return nil
		}
		elem := v.at(off+pageHeaderSize+(count-1)*pageElementSize, pageElementSize)
		if len(elem) < pageElementSize {
			return nil
		}
		switch flags {
		case branchPage:
			id = native.Uint64(elem[8:])
		case leafPage:
			at := off + pageHeaderSize + (count-1)*pageElementSize + uint64(native.Uint32(elem[4:]))
			n := uint64(native.Uint32(elem[8:]))
			if k := v.at(at, n); uint64(len(k)) == n {
				return k
			}
			return nil
		default:
			return nil
		}
	}
}
