package store

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Salvage: what a damaged cassette still holds, as an export.
//
// A disk fault, a copy cut short or a careless tool can damage a few
// pages of a cassette. Export stops at the first damage, as it should;
// Salvage goes on past it, the way Wireshark reads a capture up to a cut
// packet: every message that can still be read is written, every part
// that cannot is reported as a Loss, and the output is a plain export
// that imports and replays. Seqs are renumbered to stay dense from 1, so
// after the first loss in a session each message's note names its
// original seq, and the first message after a gap names the seqs lost.
//
// Damage is found where bbolt finds it (a page that is not what its
// parent says, which bbolt reports by panicking; a read past the end of a
// truncated file, which guard turns into a panic) and where the record
// decoder finds it. Each read that meets damage is abandoned and the walk
// resumes at the next seq, so one bad page costs the messages on it and
// nothing more. A page pointer damaged into a loop, which bbolt would
// follow for ever, is cut in a private copy of the file first
// (salvage_detour.go). A cut that took the root of the last commit's tree,
// or damage to that root page, is read as the commit before it, when
// that one's root is whole (salvage_older.go). What Salvage cannot get past: both bbolt meta pages
// damaged (the file does not open), a cut that took both commits' roots,
// or a meta bucket that no longer says it is a cassette.

// Loss is a part of a damaged cassette that Salvage could not read.
type Loss struct {
	Session string
	// From and To are the seqs lost, inclusive; both 0 when what was lost
	// is the session's info (its name, transport, handshake, end).
	From, To uint64
	// ToEnd: every seq from From on is lost, how many is not known (the
	// session's end could not be read from either of its trees).
	ToEnd bool
	// Line is, in a .jsonl, the line that could not be read (From and To
	// are then 0: what it held is not known; a gap it leaves in a
	// session's seqs is a loss of its own).
	Line int
	// Renamed: what was lost is the session's id (its key was damaged
	// into bytes an export cannot carry); Session is the name given in
	// its place.
	Renamed bool
	Err     error // what the first read in that range met
}

// InfoLost says whether what was lost is a session's info.
func (l Loss) InfoLost() bool { return l.From == 0 && l.Line == 0 && !l.Renamed }

func (l Loss) String() string {
	switch {
	case l.Line > 0:
		return fmt.Sprintf("line %d unreadable: %v", l.Line, l.Err)
	case l.Renamed:
		return fmt.Sprintf("%s: session id lost: %v", l.Session, l.Err)
	case l.From == 0:
		return fmt.Sprintf("%s: session info lost: %v", l.Session, l.Err)
	case l.ToEnd:
		return fmt.Sprintf("%s: seq %d and every later one lost (the session's end cannot be read): %v", l.Session, l.From, l.Err)
	case l.From == l.To:
		return fmt.Sprintf("%s: seq %d lost: %v", l.Session, l.From, l.Err)
	}
	return fmt.Sprintf("%s: seqs %d–%d lost (%d messages): %v", l.Session, l.From, l.To, l.To-l.From+1, l.Err)
}

// SalvageReport is what Salvage wrote and what it could not read.
type SalvageReport struct {
	Sessions int // sessions written
	Messages int // messages written
	Lost     []Loss
	// Detours are the loops of page pointers read around; what lay below
	// each is among Lost.
	Detours []PageDetour
	// Fallback, when not nil: a cut took the root of the last commit's
	// tree, or damaged it, and what was salvaged is the commit before it. What the last
	// commit wrote is lost, and is not among Lost (how much it was is not
	// known).
	Fallback *CommitFallback
}

// LostMessages counts the messages in Lost.
func (r *SalvageReport) LostMessages() int {
	n := 0
	for _, l := range r.Lost {
		if l.From > 0 { // a ToEnd loss counts as its first seq: more is not known
			n += int(l.To - l.From + 1)
		}
	}
	return n
}

// maxSessionKey bounds the length of a session id Salvage believes: ids
// are short ("s12", or a --session name), and a key whose length field
// was damaged can claim most of the file.
const maxSessionKey = 1 << 10

// maxSessionProbe bounds the session ids ("sN") Salvage looks for one by
// one when a list of sessions is damaged; the count it starts from may be
// damaged too.
const maxSessionProbe = 1 << 20

// maxBlindProbe bounds how far past the last readable seq Salvage keeps
// trying when neither tree of a session can say where it ends.
const maxBlindProbe = 4096

// harNoSalvage refuses to salvage the HAR named name.
func harNoSalvage(name string) error {
	return fmt.Errorf("%s: a HAR is read whole or not at all: export it without --salvage", name)
}

// SalvageStream is Salvage of the export r holds (stdin, a pipe), named
// name: it reads on past lines it cannot read, as from a file, since it
// reads the text whole first. What ReadStream refuses as no export (a zip,
// a bbolt cassette) and a HAR it refuses in the same words; anything else
// is taken for a damaged export, whose first line may be what is damaged.
func SalvageStream(r io.Reader, name string, w io.Writer, sessions []string, opts ...ExportOption) (*SalvageReport, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(sniffLen)
	if err := unseekable(head, name); err != nil {
		return nil, err
	}
	if LooksLikeHAR(head) {
		return nil, harNoSalvage(name)
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return salvageJSONLText(data, name, w, sessions, opts)
}

// Salvage writes to w, as JSONL, every message of the named sessions (all
// when none are named) that can still be read from the cassette at path,
// and reports what it could not read. On an undamaged cassette it writes
// what Export writes and reports no loss. The error is for what stops it
// altogether: a file that does not open, is not a cassette, or a failed
// write to w.
func Salvage(path string, w io.Writer, sessions []string, opts ...ExportOption) (*SalvageReport, error) {
	switch KindOf(path) {
	case KindHAR:
		return nil, harNoSalvage(path)
	case KindJSONL:
		return salvageJSONL(path, w, sessions, opts)
	case KindStream:
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return SalvageStream(f, path, w, sessions, opts...)
	}
	older, fallback, cleanupOlder, err := readOlderCommit(path)
	if err != nil {
		return nil, err
	}
	defer cleanupOlder()
	src, detours, cleanup, err := detourLoops(older, path)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	db, file, err := openDBFile(src, false)
	if err != nil {
		return nil, renamed(err, src, path)
	}
	defer db.Close()
	e := newJSONLEncoder(w, opts)
	rep := &SalvageReport{Detours: detours, Fallback: fallback}
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			st, err := file.Stat()
			if err == nil {
				if err := rootCut(path, tx, st.Size()); err != nil {
					return err
				}
			}
			if err := checkMeta(path, tx); err != nil {
				return err
			}
			s := &salvager{path: path, tx: tx, e: e, rep: rep, keys: map[string]string{},
				pageSize: uint64(db.Info().PageSize), file: fileView{f: file}}
			if st != nil {
				s.file.size = uint64(st.Size())
			}
			infos := s.infos()
			if len(sessions) > 0 {
				var err error
				if infos, err = resolve(path, infos, sessions); err != nil {
					return err
				}
				rep.Lost = lossesOf(rep.Lost, infos)
			}
			for i := range infos {
				if err := s.session(&infos[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return rep, err
	}
	return rep, e.w.Flush()
}

// lossesOf keeps the losses of the sessions given, and every unreadable
// line (which no session can claim).
func lossesOf(lost []Loss, infos []SessionInfo) []Loss {
	kept := map[string]bool{}
	for _, info := range infos {
		kept[info.ID] = true
	}
	var out []Loss
	for _, l := range lost {
		if l.Line > 0 || kept[l.Session] {
			out = append(out, l)
		}
	}
	return out
}

// salvager walks one read transaction of a damaged cassette.
type salvager struct {
	path string
	tx   *bolt.Tx
	e    *jsonlEncoder
	rep  *SalvageReport
	keys map[string]string // the bucket keys of sessions renamed for damage

	file     fileView // for lastKey
	pageSize uint64
}

// protect runs fn, turning a panic (bbolt's on a damaged page, or a fault
// past the end of the file) into an ErrCorrupt error.
func (s *salvager) protect(fn func() error) error {
	return guard(s.path, fn)
}

// infos finds every session: those the sessions bucket lists, and those
// whose messages are there though their info is not (its page damaged).
// A session whose info cannot be read gets one made up from its messages,
// and a Loss.
func (s *salvager) infos() []SessionInfo {
	found := map[string]bool{}
	var order []string
	note := func(id string) {
		if !found[id] {
			found[id] = true
			order = append(order, id)
		}
	}
	damaged := false
	for _, top := range [][]byte{bucketSessions, bucketMessages, bucketIndex} {
		// Keys up to the damage are kept; the sequence probe below finds
		// the usual ids ("sN") past it.
		err := s.protect(func() error {
			return s.tx.Bucket(top).ForEach(func(k, _ []byte) error {
				if len(k) > maxSessionKey { // a damaged length: not a session anyone named
					return fmt.Errorf("%s: %w: a session key of %d bytes", s.path, ErrCorrupt, len(k))
				}
				note(string(k))
				return nil
			})
		})
		damaged = damaged || err != nil
	}
	var seq uint64
	if damaged {
		_ = s.protect(func() error { seq = s.tx.Bucket(bucketSessions).Sequence(); return nil })
	}
	for n := uint64(1); n <= min(seq, maxSessionProbe); n++ {
		id := "s" + strconv.FormatUint(n, 10)
		if found[id] {
			continue
		}
		// An id the sequence handed out whose every lookup met the damage
		// may have been a session: it is taken for one, so that what it
		// held is reported lost rather than passed over in silence (a
		// file cut short before both trees' pages).
		unreadable := 0
		for _, top := range [][]byte{bucketSessions, bucketMessages} {
			exists := false
			if err := s.protect(func() error {
				b := s.tx.Bucket(top)
				exists = b.Get([]byte(id)) != nil || b.Bucket([]byte(id)) != nil
				return nil
			}); err != nil {
				unreadable++
			}
			if exists {
				note(id)
				break
			}
		}
		if unreadable == 2 {
			note(id)
		}
	}
	out := make([]SessionInfo, 0, len(order))
	for _, key := range order {
		id := key
		if id == "" || !utf8.ValidString(id) {
			// A damaged key: an export cannot carry it (an empty id, or
			// bytes JSON would change), so the session gets a new one.
			for n := len(s.keys) + 1; id == key || found[id]; n++ {
				id = "damaged-" + strconv.Itoa(n)
			}
			s.keys[id] = key
			s.rep.Lost = append(s.rep.Lost, Loss{Session: id, Renamed: true, Err: fmt.Errorf("%s: %w: session id %.64q damaged; its messages are under %s", s.path, ErrCorrupt, key, id)})
		}
		info, err := s.info(key)
		if err != nil {
			s.rep.Lost = append(s.rep.Lost, Loss{Session: id, Err: err})
			info = SessionInfo{Transport: TransportUnknown, Start: s.firstTime(key)}
		}
		info.ID = id
		out = append(out, info)
	}
	sortSessions(out)
	return out
}

// key is the bucket key of the session Salvage calls id: id itself,
// unless the key was damaged and id is the name given in its place.
func (s *salvager) key(id string) string {
	if k, ok := s.keys[id]; ok {
		return k
	}
	return id
}

// info reads one session's info; a missing one is an error here, since
// the session was seen elsewhere.
func (s *salvager) info(id string) (SessionInfo, error) {
	var info SessionInfo
	err := s.protect(func() error {
		v := s.tx.Bucket(bucketSessions).Get([]byte(id))
		if v == nil {
			return errors.New("not in the sessions list")
		}
		if err := json.Unmarshal(v, &info); err != nil {
			return fmt.Errorf("%s: %w: session %q: %v", s.path, ErrCorrupt, id, err)
		}
		return nil
	})
	info.ID = id
	if err == nil {
		info.fillGaps(func() time.Time { return s.firstTime(id) })
	}
	return info, err
}

// firstTime is the time of a session's first readable message, for the
// start of a session whose info was lost.
func (s *salvager) firstTime(id string) (t time.Time) {
	_, _ = s.walk(id, func(_ uint64, m *Message) error {
		t = m.Time
		return errStop
	})
	return t
}

// session writes one session's header and what can be read of its
// messages, renumbered, noting its losses.
func (s *salvager) session(info *SessionInfo) error {
	if err := s.e.header(info); err != nil {
		return err
	}
	s.rep.Sessions++
	r := renumberer{file: filepath.Base(s.path), session: info.ID, next: 1}
	losses, err := s.walk(s.key(info.ID), func(orig uint64, m *Message) error {
		m.Session = info.ID
		r.place(orig, m)
		s.rep.Messages++
		return s.e.message(m)
	}, r.lost)
	for _, l := range losses {
		l.Session = info.ID
		s.rep.Lost = append(s.rep.Lost, l)
	}
	return err
}

// renumberer gives one session's salvaged messages dense seqs from 1, so
// the output imports. Each message moved off its seq gets a note naming
// where it came from, and the first after a gap the seqs lost before it.
type renumberer struct {
	file, session string
	next          uint64
	lostBefore    string // the gap just before the next message placed
}

// lost hears of a loss before the message that follows it is placed.
func (r *renumberer) lost(l Loss) {
	if l.From == l.To {
		r.lostBefore = fmt.Sprintf("seq %d lost", l.From)
	} else {
		r.lostBefore = fmt.Sprintf("seqs %d–%d lost", l.From, l.To)
	}
}

// place renumbers m, whose seq was orig, and notes the move.
func (r *renumberer) place(orig uint64, m *Message) {
	if orig != r.next {
		from := fmt.Sprintf("salvaged from %s %s #%d", r.file, r.session, orig)
		if r.lostBefore != "" {
			from += "; " + r.lostBefore + " before it"
			r.lostBefore = ""
		}
		if m.Note == "" {
			m.Note = from
		} else {
			m.Note += "; " + from
		}
	}
	m.Seq = r.next
	r.next++
}

// walk calls fn for each readable message of a session in seq order, with
// its seq as stored, and returns what it could not read. onLoss, if given,
// hears of each loss as soon as it is complete, before the next message.
// An error from fn ends the walk (errStop quietly).
//
// Its work is bounded whatever the damage: gaps are lost as ranges, a key
// past any plausible seq is taken for damage to that key, and probing
// stops at the session's end, or maxBlindProbe seqs into a loss when the
// end cannot be read.
func (s *salvager) walk(id string, fn func(orig uint64, m *Message) error, onLoss ...func(Loss)) ([]Loss, error) {
	var losses []Loss
	var open *Loss // the range being lost
	lose := func(from, to uint64, err error) {
		if open != nil && open.To+1 == from {
			open.To = to
			return
		}
		closeLoss(&losses, &open, onLoss)
		open = &Loss{Session: id, From: from, To: to, Err: err}
	}
	corrupt := func(seq uint64, format string, a ...any) error {
		return fmt.Errorf("%s: %w: session %s seq %d: %s", s.path, ErrCorrupt, id, seq, fmt.Sprintf(format, a...))
	}

	last := s.lastSeq(id) // 0: not known
	plausible := func(seq uint64) bool {
		if last > 0 {
			return seq <= last
		}
		return seq < maxPlausibleSeq
	}

	seq := uint64(1) // the first seq not yet read or lost
	for {
		var stop error
		done := false
		err := s.protect(func() error {
			msgs := s.sub(bucketMessages, id)
			if msgs == nil {
				done = true
				return nil
			}
			blobs := s.sub(bucketBlobs, id)
			c := msgs.Cursor()
			for k, v := c.Seek(seqKey(seq)); k != nil; k, v = c.Next() {
				if len(k) != 8 || !plausible(binary.BigEndian.Uint64(k)) || binary.BigEndian.Uint64(k) < seq {
					continue // a damaged key: its record cannot be placed
				}
				got := binary.BigEndian.Uint64(k)
				if got > seq { // absent without damage: deleted, or never committed
					lose(seq, got-1, corrupt(seq, "missing"))
				}
				seq = got + 1
				m := &Message{Session: id, Seq: got}
				if err := decodeRecord(v, m, blobs); err != nil {
					lose(got, got, corrupt(got, "%v", err))
					continue
				}
				closeLoss(&losses, &open, onLoss)
				if err := fn(got, m); err != nil {
					stop = err
					return nil
				}
			}
			done = true
			return nil
		})
		if stop != nil {
			closeLoss(&losses, &open, onLoss)
			if errors.Is(stop, errStop) {
				stop = nil
			}
			return losses, stop
		}
		if done {
			break
		}
		// The read met damage at seq: lose it, and try the next.
		lose(seq, seq, err)
		seq++
		if last > 0 && seq > last {
			break
		}
		if last == 0 && seq >= open.From+maxBlindProbe {
			open.To, open.ToEnd = open.From, true
			break
		}
	}
	if last > 0 && seq <= last { // the end is gone from the messages tree
		lose(seq, last, corrupt(seq, "not found, though the session reaches seq %d", last))
	}
	closeLoss(&losses, &open, onLoss)
	return losses, nil
}

// maxPlausibleSeq bounds the seqs Salvage believes when it cannot read
// where a session ends: a key past it is damage, not 2^40 lost messages.
const maxPlausibleSeq = 1 << 40

// lastSeq is where a session ends, by either of its trees (the index holds
// a summary of every message, so a damaged end of one is bounded by the
// other), or 0 when neither can say. A last key that is itself damaged
// would claim more than the trees hold, so it is checked against the
// index's count when that can be read.
func (s *salvager) lastSeq(id string) uint64 {
	var last uint64
	for _, top := range [][]byte{bucketMessages, bucketIndex} {
		_ = s.protect(func() error {
			if b := s.sub(top, id); b != nil {
				// Not Cursor.Last on a tree of pages: on a damaged one it
				// can go round for ever (see looseNode). An inline
				// bucket's one page was checked by checkTree.
				var k []byte
				if root := uint64(b.Root()); root != 0 {
					k = lastKey(s.file, s.pageSize, root)
				} else {
					k, _ = b.Cursor().Last()
				}
				if len(k) == 8 {
					if n := binary.BigEndian.Uint64(k); n < maxPlausibleSeq {
						last = max(last, n)
					}
				}
			}
			return nil
		})
	}
	_ = s.protect(func() error {
		if b := s.sub(bucketIndex, id); b != nil && last > uint64(b.Stats().KeyN)+maxBlindProbe {
			last = uint64(b.Stats().KeyN) // seqs are dense: the count is the end
		}
		return nil
	})
	return last
}

// closeLoss ends the range being lost, if any.
func closeLoss(losses *[]Loss, open **Loss, onLoss []func(Loss)) {
	if *open == nil {
		return
	}
	*losses = append(*losses, **open)
	for _, f := range onLoss {
		f(**open)
	}
	*open = nil
}

func (s *salvager) sub(top []byte, session string) *bolt.Bucket {
	if b := s.tx.Bucket(top); b != nil {
		return b.Bucket([]byte(session))
	}
	return nil
}
