package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// checkTree walks the page tree of tx's snapshot of the cassette at path,
// from its own read-only mapping of file, and refuses a tree that bbolt
// could not read safely. bbolt follows page pointers without checking
// them: a child pointer damaged into a loop sends it round until it runs
// out of memory or overflows its stack, and no recover reaches either.
//
// Strict (every read and write), the tree must be a tree: every page
// reached once, from a pointer inside the tree's pages, branch or leaf,
// its elements inside it. Anything else is ErrCorrupt, naming the page.
//
// Loose (Salvage, which reads past damage), only a loop of branch
// pointers is an error; the walk goes where bbolt would (see looseNode).
//
// It reads page headers, branch elements, and the element tables of the
// leaves that hold buckets; not keys, values, or the leaves that hold
// records (most of the file).
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
	data, err := mapFile(file, size)
	if err != nil {
		return fmt.Errorf("%s: map for checking: %w", path, err)
	}
	defer syscall.Munmap(data)
	w := &treeWalk{data: data, pageSize: uint64(pageSize), pages: uint64(size / pageSize), loose: loose}
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

// mapFile maps the first size bytes of file (all of it when size < 0)
// read-only; syscall.Munmap undoes it.
func mapFile(file *os.File, size int64) ([]byte, error) {
	if size < 0 {
		st, err := file.Stat()
		if err != nil {
			return nil, err
		}
		size = st.Size()
	}
	if size <= 0 {
		return nil, errors.New("nothing to map")
	}
	return syscall.Mmap(int(file.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

// pageLoop is a child pointer, element elem of branch page from, that
// points back up the tree to page to.
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

type treeWalk struct {
	data     []byte
	pageSize uint64
	pages    uint64 // mapped
	loose    bool
	// A page is entered when the walk reaches it and finished when all
	// below it has been walked, per bucket depth: reaching an entered,
	// unfinished page again is a loop.
	entered, finished [maxBucketDepth + 1]pageSet
	// reached is every page reached at any depth (strict: a page is in
	// one bucket, once).
	reached pageSet
}

// rootOf reads the root bucket's page from the meta page of transaction
// txid (bbolt keeps two meta pages and uses the newer valid one).
func (w *treeWalk) rootOf(txid uint64) (uint64, error) {
	for id := range uint64(2) {
		off := id * w.pageSize
		if off+80 > uint64(len(w.data)) {
			break
		}
		meta := w.data[off+pageHeaderSize:]
		if native.Uint64(meta[48:]) == txid { // magic, version, page size, flags, root (16), freelist, high water mark, txid
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
	next     int
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
		if err := enter(kid, n.kidDepth); err != nil {
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
	head := w.data[off:]
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
		for i := range count {
			n.kids[i] = native.Uint64(w.data[off+pageHeaderSize+i*pageElementSize+8:])
		}
		return nil
	case flags == leafPage && n.depth < maxBucketDepth:
		var err error
		n.kids, err = w.bucketRoots(id, off, end, count)
		n.kidDepth = n.depth + 1
		return err
	case flags == leafPage:
		return nil
	}
	return fmt.Errorf("page %d has flags %#x where a branch or leaf page belongs", id, flags)
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
	flags, count := native.Uint16(w.data[off+8:]), uint64(native.Uint16(w.data[off+10:]))
	if native.Uint64(w.data[off:]) != n.id || !validPageType(flags) {
		return nil
	}
	if flags == leafPage {
		if n.depth < maxBucketDepth {
			n.kids, _ = w.bucketRoots(n.id, off, uint64(len(w.data)), count)
			n.kidDepth = n.depth + 1
		}
		return nil
	}
	n.kidDepth, n.elements = n.depth, true
	for i := range max(count, 1) {
		at := off + pageHeaderSize + i*pageElementSize + 8
		if at+8 > uint64(len(w.data)) {
			break // and so are the rest: bbolt's read of them faults
		}
		n.kids = append(n.kids, native.Uint64(w.data[at:]))
	}
	return nil
}

// validPageType is bbolt's test of a page's flags: one known type.
func validPageType(flags uint16) bool {
	return flags == branchPage || flags == leafPage || flags == metaPage || flags == freelistPage
}

// bucketRoots returns the root pages of the buckets stored in the leaf
// page id, whose elements start at data[off+16:] and, strict, must lie
// before data[end]. Inline buckets, which have no pages of their own,
// are checked where they are.
func (w *treeWalk) bucketRoots(id, off, end uint64, count uint64) ([]uint64, error) {
	var roots []uint64
	for i := range count {
		at := off + pageHeaderSize + i*pageElementSize
		if at+pageElementSize > end {
			break // loose: bbolt's read of the rest faults, recovered
		}
		elem := w.data[at:]
		if native.Uint32(elem)&bucketElement == 0 {
			continue
		}
		vstart := at + uint64(native.Uint32(elem[4:])) + uint64(native.Uint32(elem[8:]))
		vend := vstart + uint64(native.Uint32(elem[12:]))
		switch {
		case vend > end || vend-vstart < bucketHeader:
			if !w.loose {
				return nil, fmt.Errorf("page %d: bucket %d of %d lies outside the page", id, i+1, count)
			}
		case native.Uint64(w.data[vstart:]) != 0:
			roots = append(roots, native.Uint64(w.data[vstart:]))
		case vend-vstart < bucketHeader+pageHeaderSize:
			if !w.loose {
				return nil, fmt.Errorf("page %d: inline bucket %d of %d is cut short", id, i+1, count)
			}
		default:
			if err := w.inline(id, i, count, vstart+bucketHeader, vend); err != nil {
				return nil, err
			}
		}
	}
	return roots, nil
}

// inline checks the inline bucket stored in element i of page id, a page
// of its own at data[start:end]. Strict, it must be a leaf whose elements
// lie inside it (its records are not read). Loose, only one thing loops:
// every page of an inline bucket is page 0, itself, so a branch there
// whose child pointer is 0 is its own child.
func (w *treeWalk) inline(id, i, count, start, end uint64) error {
	flags, n := native.Uint16(w.data[start+8:]), uint64(native.Uint16(w.data[start+10:]))
	if !w.loose {
		if flags != leafPage {
			return fmt.Errorf("page %d: inline bucket %d of %d is not a leaf", id, i+1, count)
		}
		if start+pageHeaderSize+n*pageElementSize > end {
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
		at := start + pageHeaderSize + j*pageElementSize + 8
		if at+8 <= uint64(len(w.data)) && native.Uint64(w.data[at:]) == 0 {
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
// file mapped at data, found as Cursor.Last finds it (the last element of
// each page down), but only through pages that are what they say (a
// branch or a leaf with elements), each once, the key inside the file:
// nil where bbolt would have gone astray or round. Salvage uses it where
// it would call Cursor.Last on a damaged tree (see looseNode).
func lastKey(data []byte, pageSize, root uint64) []byte {
	seen := map[uint64]bool{}
	for id := root; ; {
		off := id * pageSize
		if id < 2 || seen[id] || off/pageSize != id || off+pageSize > uint64(len(data)) {
			return nil
		}
		seen[id] = true
		flags, count := native.Uint16(data[off+8:]), uint64(native.Uint16(data[off+10:]))
		elem := off + pageHeaderSize + (count-1)*pageElementSize
		if count == 0 || elem+pageElementSize > uint64(len(data)) {
			return nil
		}
		switch flags {
		case branchPage:
			id = native.Uint64(data[elem+8:])
		case leafPage:
			at := elem + uint64(native.Uint32(data[elem+4:]))
			end := at + uint64(native.Uint32(data[elem+8:]))
			if end > uint64(len(data)) {
				return nil
			}
			return bytes.Clone(data[at:end])
		default:
			return nil
		}
	}
}
