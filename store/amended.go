package store

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The amendment log. Session.Amend stores a message again over its seq;
// when the first version was committed in an earlier transaction, a
// follower may have read it already, and reading only the seqs after the
// last one it saw it would never learn of the second. So the writer notes
// each such amendment in the "amended" bucket, under a key that grows with
// every note (the bucket's NextSequence, which the file lock serialises
// across the processes that record into one cassette): a follower keeps
// the last key it read, its mark, and asks only for what lies past it.
// An amendment in the transaction that first stores its message is not
// noted: no one can have read the first version.
//
// The bucket is an addition to format version 1, not a new version:
// readers of version 1 ignore a bucket they do not know, as they ignore
// summary flags, and an older writer, which does not note its amendments,
// leaves a follower no worse off than before the log existed.
//
//	key:   8-byte big-endian note number, from 1
//	value: 8-byte big-endian seq, then the session id

// noteAmended logs that message seq of session was stored again.
func noteAmended(tx *bolt.Tx, session string, seq uint64) error {
	b := tx.Bucket(bucketAmended)
	n, err := b.NextSequence()
	if err != nil {
		return err
	}
	b.FillPercent = 1 // keys only ever grow
	v := make([]byte, 8, 8+len(session))
	binary.BigEndian.PutUint64(v, seq)
	return b.Put(seqKey(n), append(v, session...))
}

// AmendMark is the amendment log's current end: a follower that has read
// every message as this snapshot holds them passes it to Amended later.
// 0 for a cassette whose writers never logged an amendment.
func (r *Reader) AmendMark() uint64 {
	if b := r.tx.Bucket(bucketAmended); b != nil {
		return b.Sequence()
	}
	return 0
}

// Amended calls fn, in the order they were stored, for each message
// stored again after its first commit whose note comes after mark (see
// AmendMark), and returns the mark to pass next time. A message amended
// twice is reported twice.
func (r *Reader) Amended(mark uint64, fn func(session string, seq uint64) error) (uint64, error) {
	b := r.tx.Bucket(bucketAmended)
	if b == nil {
		return mark, nil
	}
	c := b.Cursor()
	for k, v := c.Seek(seqKey(mark + 1)); k != nil; k, v = c.Next() {
		if len(k) != 8 || len(v) < 8 {
			return mark, fmt.Errorf("%s: %w: amendment log entry %x: %d-byte key, %d-byte value", r.path, ErrCorrupt, k, len(k), len(v))
		}
		mark = binary.BigEndian.Uint64(k)
		if err := fn(string(v[8:]), binary.BigEndian.Uint64(v)); err != nil {
			return mark, err
		}
	}
	return mark, nil
}

// amendLog decides, during one commit, which amendments to note: those
// whose message an earlier transaction stored.
type amendLog struct {
	// stored holds the messages this transaction has stored so far, and
	// those it noted, so that a message amended twice in one batch is
	// noted once. nil when the batch amends nothing, as most batches do:
	// they pay nothing for the log.
	stored map[amendKey]bool
}

type amendKey struct {
	session string
	seq     uint64
}

func newAmendLog(batch []*Message) amendLog {
	for _, m := range batch {
		if m.amends {
			return amendLog{stored: map[amendKey]bool{}}
		}
	}
	return amendLog{}
}

// note logs m if it amends a message committed before this transaction:
// one this transaction has not stored. Call it for every message of the
// batch, in order.
func (l amendLog) note(tx *bolt.Tx, m *Message) error {
	if l.stored == nil {
		return nil
	}
	k := amendKey{m.Session, m.Seq}
	if m.amends && !l.stored[k] {
		if err := noteAmended(tx, m.Session, m.Seq); err != nil {
			return fmt.Errorf("note amendment of %s seq %d: %w", m.Session, m.Seq, err)
		}
	}
	l.stored[k] = true
	return nil
}
