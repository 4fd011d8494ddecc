package replay

import (
	"bytes"
	"hash/maphash"
)

// keyIndex finds recorded requests by their match key (method, NUL,
// canonical params). A Go map keyed by those strings costs several cache
// misses per look-up on a 100k-interaction cassette (control word, slot,
// key bytes, the slice of occurrences): answering slowed down with the
// cassette's size. Here a look-up is one probe into a flat table of
// hash-tagged entry numbers, then the entry, its key bytes and its first
// occurrence, which all lie in recorded order: a replay, which asks in
// about that order, reads them as streams. The probe's slot is the one
// random read left; findNext skips it when the session's guess is right.
type keyIndex struct {
	seed maphash.Seed
	// slots: high 32 bits the hash's tag, low 32 the entry number + 1;
	// 0 is empty. Open addressing, linear probing, at most half full.
	slots   []uint64
	entries []keyEntry
}

// keyEntry is one distinct match key and the interactions recorded with
// it, in recorded order.
type keyEntry struct {
	key   []byte
	first *interaction
	more  []*interaction
}

func (e *keyEntry) len() int { return 1 + len(e.more) }

// at returns the n-th occurrence, n < len().
func (e *keyEntry) at(n int) *interaction {
	if n == 0 {
		return e.first
	}
	return e.more[n-1]
}

func newKeyIndex(seed maphash.Seed, capacity int) *keyIndex {
	x := &keyIndex{seed: seed}
	x.entries = make([]keyEntry, 0, capacity)
	x.slots = make([]uint64, slotsFor(capacity))
	return x
}

// slotsFor keeps the table at most half full.
func slotsFor(n int) int {
	s := 16
	for s < 2*n {
		s <<= 1
	}
	return s
}

func (x *keyIndex) hash(key []byte) uint64 { return maphash.Bytes(x.seed, key) }

// findNext is find, trying entry number guess first, which costs no hash
// and no read of the slot table. A replay asks mostly in recorded order,
// so the entry after the one matched last is usually right; on a 100k
// cassette the slot's cache miss was most of what a look-up cost.
func (x *keyIndex) findNext(key []byte, guess uint32) (*keyEntry, uint32) {
	if guess < uint32(len(x.entries)) && bytes.Equal(x.entries[guess].key, key) {
		return &x.entries[guess], guess
	}
	return x.find(x.hash(key), key)
}

// find returns the entry for key (of hash h) and its number, or nil.
func (x *keyIndex) find(h uint64, key []byte) (*keyEntry, uint32) {
	if len(x.entries) == 0 {
		return nil, 0
	}
	mask := uint64(len(x.slots) - 1)
	tag := h >> 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return nil, 0
		}
		if s>>32 == tag {
			n := uint32(s) - 1
			if e := &x.entries[n]; bytes.Equal(e.key, key) {
				return e, n
			}
		}
	}
}

// add records it under key (of hash h).
func (x *keyIndex) add(h uint64, key []byte, it *interaction) {
	if e, _ := x.find(h, key); e != nil {
		e.more = append(e.more, it)
		return
	}
	if 2*(len(x.entries)+1) > len(x.slots) {
		x.grow()
	}
	x.entries = append(x.entries, keyEntry{key: key, first: it})
	x.put(h, uint32(len(x.entries)))
}

// put stores entry number n (1-based) for hash h in a free slot.
func (x *keyIndex) put(h uint64, n uint32) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = h>>32<<32 | uint64(n)
}

func (x *keyIndex) grow() {
	x.slots = make([]uint64, 2*len(x.slots))
	for i := range x.entries {
		x.put(x.hash(x.entries[i].key), uint32(i+1))
	}
}
