package store

import (
	"encoding/binary"
	"fmt"
	bolt "go.etcd.io/bbolt"
)

// Read helpers for the inspector, which lists a million messages and
// follows a cassette while recorders write it. They lend bbolt's bytes to
// the callback instead of copying them, so a scan allocates nothing per
// message; those bytes are valid only during the call.

// RawSummary is a Summary whose string fields are left as bytes.
type RawSummary struct {
	Summary                                // its string fields stay empty
	Method, ID, Tool, ProgressToken []byte // valid only during the callback
}

// RawSummaries calls fn for each summary of a session with seq in
// [from, to] (to 0: no upper bound), in seq order. The RawSummary and its
// bytes are reused between calls.
func (r *Reader) RawSummaries(session string, from, to uint64, fn func(s *RawSummary) error) error {
	b := r.sub(bucketIndex, session)
	if b == nil {
		return nil
	}
	var s RawSummary
	fields := [4]*[]byte{&s.Method, &s.ID, &s.Tool, &s.ProgressToken}
	n := 0
	// decodeSummary hands its four strings to intern in this order.
	intern := func(f []byte) string {
		*fields[n%4] = f
		n++
		return ""
	}
	c := b.Cursor()
	for k, v := c.Seek(seqKey(from)); k != nil; k, v = c.Next() {
		seq := binary.BigEndian.Uint64(k)
		if to != 0 && seq > to {
			break
		}
		s.Summary = Summary{Seq: seq}
		n = 0
		if err := decodeSummary(v, &s.Summary, intern); err != nil {
			return fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, seq, err)
		}
		if err := fn(&s); err != nil {
			return err
		}
	}
	return nil
}

// Frames calls fn with the frame bytes of each message of a session with
// seq in [from, to] (to 0: no upper bound), in seq order. frame is valid
// only during the call.
func (r *Reader) Frames(session string, from, to uint64, fn func(seq uint64, frame []byte) error) error {
	b := r.sub(bucketMessages, session)
	if b == nil {
		return nil
	}
	blobs := r.sub(bucketBlobs, session)
	c := b.Cursor()
	for k, v := c.Seek(seqKey(from)); k != nil; k, v = c.Next() {
		seq := binary.BigEndian.Uint64(k)
		if to != 0 && seq > to {
			break
		}
		frame, err := recordFrame(v, seq, blobs)
		if err != nil {
			return fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, seq, err)
		}
		if err := fn(seq, frame); err != nil {
			return err
		}
	}
	return nil
}

// recordFrame returns the frame part of a record, without copying unless
// the frame is stored in chunks.
func recordFrame(v []byte, seq uint64, blobs *bolt.Bucket) ([]byte, error) {
	if len(v) < 10 || (v[0] != codecVersion && v[0] != chunkedVersion) {
		return nil, errShort
	}
	_, rest, err := readBytes(v[10:]) // metadata
	if err != nil {
		return nil, err
	}
	_, rest, err = readBytes(rest) // note
	if err != nil {
		return nil, err
	}
	if v[0] == chunkedVersion {
		return joinChunks(rest, seq, blobs)
	}
	return rest, nil
}
