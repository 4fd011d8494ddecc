package replay

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
)

// keyIndex finds recorded requests by their match key (method, NUL,
// canonical params). It is built once, at load, and only read after.
//
// On a large cassette, a request asked out of recorded order costs what
// its cache misses cost: each read whose address comes from the one
// before waits for it, 100 to 300 ns from memory. A Go map made that
// several misses (control word, slot, key bytes, the slice of
// occurrences); a table of entry numbers, then the entry, its key bytes,
// the interaction and the frame holding its answer, five. Here a slot of
// the table (which mostly stays in the last-level cache) says both where
// the key's record is and which interaction it belongs to; the record
// holds the key and, before it, a small recorded result: one miss for
// both, then the interaction's. findNext spares the probe when the
// session's guess is right.
type keyIndex struct {
	seed maphash.Seed
	// slots: open addressing, linear probing, at most half full.
	slots []keySlot
	// slab holds the interactions; a slot names one by its number (n).
	slab []interaction
	// recs holds a record per indexed interaction, in recorded order: the
	// key's length (4 bytes, little-endian), the recorded result when it is
	// small (see keptResult), then the key. Reading the key's length and
	// the key reads a small result too. A key longer than inlineKeyMax is
	// not in its record: the length says elsewhere (keyElsewhere), and
	// the key is the interaction's.
	recs []byte
	// dups lists the occurrences of each key recorded more than once, in
	// recorded order; interaction.dup numbers them from 1.
	dups [][]*interaction
	// claims counts, per entry of dups, the live requests that used the
	// key, in every session (see claim).
	claims []atomic.Int32
	// byEra splits each entry of dups by the era of the sessions that
	// recorded it, once a request of a cassette that holds sessions of
	// both eras asks (see Cassette.ofEra).
	byEra []atomic.Pointer[eraSplit]
}

// keySlot is one slot of the table; the zero value is empty.
type keySlot struct {
	// item: high 32 bits the hash's tag, low 32 the interaction's number
	// in slab + 1.
	item uint64
	// rec: where its record starts in recs, shifted left 12 bits; the low
	// 12 its result's length there, so that the key's place is known
	// before the record is read.
	rec uint64
}

const resultBits = 12

// keptResult is the largest result copied next to its key: a larger one
// fills cache lines of its own anyway, and is left where it was recorded.
const keptResult = 1<<resultBits - 1

// inlineKeyMax is the longest key copied into its record. A longer one
// fills cache lines of its own anyway, and is left where parsing wrote it
// (parser.key gives it a buffer of its own): copied, the key of a
// recorded 64 MiB upload would be held twice while a cassette loads.
const inlineKeyMax = 16 << 10

// keyElsewhere, as a record's key length, says that its key is not in
// the record but the interaction's.
const keyElsewhere = 1<<32 - 1

// inRecord is how much of key its record holds: all of it, or none.
func inRecord(key []byte) int {
	if len(key) > inlineKeyMax {
		return 0
	}
	return len(key)
}

// buildKeyIndex indexes items, interactions of slab in recorded order, by
// their keys (of hashes hashes). It moves their keys, and their results
// when small, into the index's records: a replay reads them in about that
// order, and a request asked out of order finds its answer next to its
// key. Items recorded under a key already seen become its later
// occurrences.
func buildKeyIndex(seed maphash.Seed, slab []interaction, items []*interaction, hashes []uint64) *keyIndex {
	x := &keyIndex{seed: seed, slab: slab, slots: make([]keySlot, slotsFor(len(items)))}
	// starts[i] is where item i's record starts; kept[i], how long its
	// result there is.
	starts := make([]int, len(items)+1)
	kept := make([]uint16, len(items))
	for i, it := range items {
		kept[i] = uint16(len(keptOf(it)))
		starts[i+1] = starts[i] + 4 + int(kept[i]) + inRecord(it.key)
	}
	x.recs = make([]byte, starts[len(items)])
	// Each record has its place: copying keys and results, most of the
	// work, goes on every core. The table is filled after, in recorded
	// order, so that a key's first occurrence is the one it finds.
	eachPart(len(items), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			it, rec := items[i], x.recs[starts[i]:starts[i+1]:starts[i+1]]
			if k := 4 + int(kept[i]); k > 4 {
				copy(rec[4:k], it.prep.Reply.Result)
				it.prep.Reply.Result = rec[4:k:k]
			}
			if len(it.key) > inlineKeyMax {
				binary.LittleEndian.PutUint32(rec, keyElsewhere)
				continue
			}
			binary.LittleEndian.PutUint32(rec, uint32(len(it.key)))
			copy(rec[4+kept[i]:], it.key)
			it.key = rec[4+kept[i]:]
		}
	})
	for i, it := range items {
		start := starts[i]
		first := x.find(hashes[i], it.key)
		switch {
		case first == nil:
			x.put(hashes[i], keySlot{item: uint64(it.n) + 1, rec: uint64(start)<<resultBits | uint64(kept[i])})
		case first.dup == 0:
			x.dups = append(x.dups, []*interaction{first, it})
			first.dup = uint32(len(x.dups))
			it.dup = first.dup
		default:
			x.dups[first.dup-1] = append(x.dups[first.dup-1], it)
			it.dup = first.dup
		}
	}
	x.claims = make([]atomic.Int32, len(x.dups))
	x.byEra = make([]atomic.Pointer[eraSplit], len(x.dups))
	return x
}

// eachPart calls fn on every core for parts of [0, n), and returns when
// all are done; on one goroutine when n is small.
func eachPart(n int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 4096 || workers < 2 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	part := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += part {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, min(lo+part, n))
		}()
	}
	wg.Wait()
}

// keptOf is the result to copy next to its key, if any.
func keptOf(it *interaction) []byte {
	if r := it.prep.Reply.Result; len(r) <= keptResult {
		return r
	}
	return nil
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

// occurrences returns the interactions recorded with its key, it being
// one of them, in recorded order; nil when it is the only one.
func (x *keyIndex) occurrences(it *interaction) []*interaction {
	if it.dup == 0 {
		return nil
	}
	return x.dups[it.dup-1]
}

// claim counts a live request that was answered with one of the
// occurrences of first's key, and returns the occurrence to count as used
// for Unused: the next not counted yet, in recorded order. Each live
// session replays identical requests from the cassette's first
// occurrence on, so in a cassette pooling several recorded sessions the
// later sessions' occurrences would never be used, although every client
// asked exactly what was recorded. Counted over all sessions, N live
// requests use up N recorded ones.
func (x *keyIndex) claim(first *interaction) *interaction {
	return claimNext(&x.claims[first.dup-1], x.dups[first.dup-1])
}

// claimNext counts one more live use of the occurrences all, whose uses
// so far n counts, and returns the one to mark used: the next not marked
// yet, the last once they ran out.
func claimNext(n *atomic.Int32, all []*interaction) *interaction {
	return all[min(int(n.Add(1))-1, len(all)-1)]
}

// findNext is find in the index of requests, trying guess first: the
// number of an interaction in slab, which costs no hash and no probe. A
// replay asks mostly in recorded order, so the interaction after the one
// matched last is usually right. It returns the interaction recorded first
// with the key, or nil.
func (x *keyIndex) findNext(key []byte, guess uint32) *interaction {
	if guess < uint32(len(x.slab)) {
		if it := &x.slab[guess]; !it.note && bytes.Equal(it.key, key) {
			if it.dup != 0 {
				return x.dups[it.dup-1][0]
			}
			return it
		}
	}
	return x.find(x.hash(key), key)
}

// find returns the interaction recorded first with key (of hash h), or
// nil.
func (x *keyIndex) find(h uint64, key []byte) *interaction {
	mask := uint64(len(x.slots) - 1)
	tag := h >> 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.item == 0 {
			return nil
		}
		if s.item>>32 != tag {
			continue
		}
		// The key's place does not depend on the length read from the
		// record: the two reads go together.
		r, k := x.recs[s.rec>>resultBits:], 4+int(s.rec&keptResult)
		n := binary.LittleEndian.Uint32(r)
		if len(r) >= k+len(key) && n == uint32(len(key)) && bytes.Equal(r[k:k+len(key)], key) {
			return &x.slab[uint32(s.item)-1]
		}
		if it := &x.slab[uint32(s.item)-1]; n == keyElsewhere && bytes.Equal(it.key, key) {
			return it
		}
	}
}

// put stores s for hash h in a free slot.
func (x *keyIndex) put(h uint64, s keySlot) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i].item != 0 {
		i = (i + 1) & mask
	}
	s.item |= h >> 32 << 32
	x.slots[i] = s
}
