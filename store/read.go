package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Reader reads one consistent snapshot of a cassette. It is valid only
// inside the View call that made it; what it returns is copied out.
type Reader struct {
	path string
	tx   *bolt.Tx
}

// View opens the cassette read-only for the duration of fn. Writers in
// other processes wait while it runs, so keep fn short.
func View(path string, fn func(r *Reader) error) error {
	return view(path, func(tx *bolt.Tx) error { return fn(&Reader{path: path, tx: tx}) })
}

// Sessions lists every session, oldest first.
func (r *Reader) Sessions() ([]SessionInfo, error) {
	b := r.tx.Bucket(bucketSessions)
	if b == nil {
		return nil, nil
	}
	var out []SessionInfo
	err := b.ForEach(func(k, v []byte) error {
		var info SessionInfo
		if err := json.Unmarshal(v, &info); err != nil {
			return fmt.Errorf("%s: %w: session %q: %v", r.path, ErrCorrupt, k, err)
		}
		info.ID = string(k)
		info.fillGaps(func() time.Time { return r.firstTime(info.ID) })
		out = append(out, info)
		return nil
	})
	sortSessions(out)
	return out, err
}

// sortSessions orders by start time, then by the number in the id, so s10
// follows s9.
func sortSessions(s []SessionInfo) {
	sort.SliceStable(s, func(i, j int) bool {
		if !s[i].Start.Equal(s[j].Start) {
			return s[i].Start.Before(s[j].Start)
		}
		return idLess(s[i].ID, s[j].ID)
	})
}

func idLess(a, b string) bool {
	na, ea := strconv.Atoi(strings.TrimPrefix(a, "s"))
	nb, eb := strconv.Atoi(strings.TrimPrefix(b, "s"))
	if ea == nil && eb == nil {
		return na < nb
	}
	return a < b
}

// Session returns one session's info by id.
func (r *Reader) Session(id string) (SessionInfo, error) {
	v := r.tx.Bucket(bucketSessions).Get([]byte(id))
	if v == nil {
		return SessionInfo{}, fmt.Errorf("%s: %w %q", r.path, ErrNoSession, id)
	}
	var info SessionInfo
	if err := json.Unmarshal(v, &info); err != nil {
		return info, fmt.Errorf("%s: %w: session %q: %v", r.path, ErrCorrupt, id, err)
	}
	info.ID = id
	info.fillGaps(func() time.Time { return r.firstTime(id) })
	return info, nil
}

// firstTime is the time of a session's first message, zero if it has
// none (or its index entry cannot be read: the info is still worth
// listing).
func (r *Reader) firstTime(session string) (t time.Time) {
	_ = r.Summaries(session, 1, nil, func(s *Summary) error {
		t = s.Time
		return errStop
	})
	return t
}

// Count returns how many messages a session holds.
func (r *Reader) Count(session string) int {
	if b := r.sub(bucketIndex, session); b != nil {
		return b.Stats().KeyN
	}
	return 0
}

// LastSeq returns the highest seq stored for a session, 0 if none.
func (r *Reader) LastSeq(session string) uint64 {
	if b := r.sub(bucketIndex, session); b != nil {
		if k, _ := b.Cursor().Last(); len(k) == 8 {
			return binary.BigEndian.Uint64(k)
		}
	}
	return 0
}

func (r *Reader) sub(top []byte, session string) *bolt.Bucket {
	if b := r.tx.Bucket(top); b != nil {
		return b.Bucket([]byte(session))
	}
	return nil
}

// Messages calls fn for each message of a session with seq ≥ from, in seq
// order. The Message is fresh for each call and may be kept.
func (r *Reader) Messages(session string, from uint64, fn func(m *Message) error) error {
	b := r.sub(bucketMessages, session)
	if b == nil {
		return nil
	}
	blobs := r.sub(bucketBlobs, session)
	c := b.Cursor()
	for k, v := c.Seek(seqKey(from)); k != nil; k, v = c.Next() {
		m := &Message{Session: session, Seq: binary.BigEndian.Uint64(k)}
		if err := decodeRecord(v, m, blobs); err != nil {
			return fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, m.Seq, err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Message returns one message.
func (r *Reader) Message(session string, seq uint64) (*Message, error) {
	b := r.sub(bucketMessages, session)
	var v []byte
	if b != nil {
		v = b.Get(seqKey(seq))
	}
	if v == nil {
		return nil, fmt.Errorf("%s: session %s has no message %d", r.path, session, seq)
	}
	m := &Message{Session: session, Seq: seq}
	if err := decodeRecord(v, m, r.sub(bucketBlobs, session)); err != nil {
		return nil, fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, seq, err)
	}
	return m, nil
}

// Summaries calls fn for each summary of a session with seq ≥ from. The
// Summary is reused between calls: copy it to keep it. intern, if not nil,
// turns string fields into strings (to share repeated ones).
func (r *Reader) Summaries(session string, from uint64, intern func([]byte) string, fn func(s *Summary) error) error {
	b := r.sub(bucketIndex, session)
	if b == nil {
		return nil
	}
	var s Summary
	c := b.Cursor()
	for k, v := c.Seek(seqKey(from)); k != nil; k, v = c.Next() {
		s = Summary{Seq: binary.BigEndian.Uint64(k)}
		if err := decodeSummary(v, &s, intern); err != nil {
			return fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, s.Seq, err)
		}
		if err := fn(&s); err != nil {
			return err
		}
	}
	return nil
}

// ResolveSessions maps names given by a user (ids like "s3", or names
// given with --session) to session ids. No names means all sessions.
func (r *Reader) ResolveSessions(names []string) ([]SessionInfo, error) {
	all, err := r.Sessions()
	if err != nil || len(names) == 0 {
		return all, err
	}
	return resolve(r.path, all, names)
}

// resolve picks the sessions each name names, in the order first named;
// a session named twice (by id and by name, say) is picked once.
func resolve(path string, all []SessionInfo, names []string) ([]SessionInfo, error) {
	var out []SessionInfo
	for _, n := range names {
		found := false
		for _, s := range all {
			if !s.Named(n) {
				continue
			}
			found = true
			if !slices.ContainsFunc(out, func(o SessionInfo) bool { return o.ID == s.ID }) {
				out = append(out, s)
			}
		}
		if !found {
			return nil, NoSession(path, n, all)
		}
	}
	return out, nil
}
