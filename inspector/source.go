package inspector

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mcptape/mcptape/store"
)

// Source is where messages come from: a cassette read in short views, or
// a JSONL export held in memory. Its methods may be called from any
// goroutine.
type Source interface {
	// Poll returns every session's current info, the summaries stored
	// after after.Seqs[session] (0 for a session not seen yet), and those
	// of the messages up to it stored again since after.Amends.
	Poll(after Mark) (*Batch, error)
	// Message returns one message with its frame and metadata.
	Message(ref Ref) (*store.Message, error)
	// Frames calls fn with the bytes of the messages of a session with seq
	// in [from, to]; frame is valid only during the call.
	Frames(session string, from, to uint64, fn func(seq uint64, frame []byte) error) error
	// HTTPBriefs calls fn with the HTTP status and stream of the messages
	// of a session whose seq is in seqs (ascending), zero for a message
	// without HTTP metadata.
	HTTPBriefs(session string, seqs []uint64, fn func(seq uint64, b store.HTTPBrief) error) error
	// Messages calls fn for the messages of a session with seq in
	// [from, to], in seq order; fn may keep them.
	Messages(session string, from, to uint64, fn func(m *store.Message) error) error
	// Live says whether the source can grow (a .db another process writes).
	Live() bool
}

// Mark is how far a follower has read a source.
type Mark struct {
	// Seqs is, per session, the last seq read (none: 0).
	Seqs map[string]uint64
	// Amends is where the cassette's amendment log was read up to
	// (store.Reader.AmendMark): the messages read are known as they were
	// stored then. A recorder amends a client's HTTP message with the
	// status of an answer that carried no message, after it may have
	// been read.
	Amends uint64
	// File and Starts, when set, say which cassette was read: the file
	// (as os.Stat saw it) and each session's start. A Poll that finds
	// another file at the path, or a session gone, started at another
	// time or shorter than Seqs, returns ErrReplaced rather than mix two
	// cassettes (a cp over it, an rm and a new recording).
	File   os.FileInfo
	Starts map[string]time.Time
}

// ErrReplaced is Poll's error when the cassette at the path is no longer
// the one read so far: the follower must read it again from the start.
var ErrReplaced = errors.New("the cassette was replaced by another file")

// Batch is what one Poll found.
type Batch struct {
	Sessions []store.SessionInfo
	Msgs     []BatchMsg // per session in seq order
	// Amended are messages the follower had read that were stored again
	// since, with their summaries as they stand: what else of them it
	// shows (the HTTP status, the note) it must read again. Each is
	// there once, in no particular order.
	Amended []BatchMsg
	// Amends is the Mark.Amends to poll from next.
	Amends uint64
	// More is set when Poll stopped early to keep its view short.
	More bool
}

// BatchMsg is one new summary.
type BatchMsg struct {
	Session string
	Sum     store.Summary
}

// chunk bounds how many messages one read transaction touches, so that a
// recorder in another process never waits long for the file.
const chunk = 50_000

// dbSource reads a .db cassette, a short View at a time; its Viewer walks
// the file's page tree once per snapshot, not at every message shown.
type dbSource struct {
	path   string
	viewer *store.Viewer
}

func (d dbSource) Live() bool { return true }

func (d dbSource) Poll(after Mark) (*Batch, error) {
	if after.File != nil {
		// A missing file is the View's error to report.
		if st, err := os.Stat(d.path); err == nil && !os.SameFile(st, after.File) {
			return nil, ErrReplaced
		}
	}
	b := &Batch{}
	err := d.viewer.View(func(r *store.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		if !sameCassette(r, infos, after) {
			return ErrReplaced
		}
		b.Sessions = infos
		if b.Amended, b.Amends, err = amendedSince(r, after); err != nil {
			return err
		}
		budget := chunk * 2
		for _, info := range infos {
			if budget <= 0 {
				b.More = true
				break
			}
			err := r.RawSummaries(info.ID, after.Seqs[info.ID]+1, 0, func(s *store.RawSummary) error {
				b.Msgs = append(b.Msgs, BatchMsg{Session: info.ID, Sum: ownSummary(s)})
				if budget--; budget <= 0 {
					b.More = true
					return errStopScan
				}
				return nil
			})
			if err != nil && err != errStopScan {
				return err
			}
		}
		return nil
	})
	return b, err
}

var errStopScan = fmt.Errorf("stop scan")

// sameCassette says whether what r reads can be the cassette after was
// read from: every session known is there, started when it did, and as
// long at least. A file copied over the cassette in place keeps its
// inode, and a new file may get the inode of one removed, so the file's
// identity alone does not tell.
func sameCassette(r *store.Reader, infos []store.SessionInfo, after Mark) bool {
	if after.Starts == nil {
		return true
	}
	start := make(map[string]time.Time, len(infos))
	for _, info := range infos {
		start[info.ID] = info.Start
	}
	for id, t := range after.Starts {
		s, ok := start[id]
		if !ok || !s.Equal(t) || r.LastSeq(id) < after.Seqs[id] {
			return false
		}
	}
	return true
}

// ownSummary copies s's strings out of the view.
func ownSummary(s *store.RawSummary) store.Summary {
	sum := s.Summary
	sum.Method, sum.ID, sum.Tool = string(s.Method), string(s.ID), string(s.Tool)
	return sum
}

// amendedSince reads the summaries of the messages up to after.Seqs that
// the amendment log says were stored again past after.Amends, each once,
// and where the log ends. A message past after.Seqs is left to be read
// as new, as it stands.
func amendedSince(r *store.Reader, after Mark) ([]BatchMsg, uint64, error) {
	seen := map[Ref]bool{}
	var refs []Ref
	mark, err := r.Amended(after.Amends, func(session string, seq uint64) error {
		ref := Ref{Session: session, Seq: seq}
		if seq <= after.Seqs[session] && !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
		return nil
	})
	if err != nil {
		return nil, after.Amends, err
	}
	var out []BatchMsg
	for _, ref := range refs {
		err := r.RawSummaries(ref.Session, ref.Seq, ref.Seq, func(s *store.RawSummary) error {
			out = append(out, BatchMsg{Session: ref.Session, Sum: ownSummary(s)})
			return nil
		})
		if err != nil {
			return nil, after.Amends, err
		}
	}
	return out, mark, nil
}

func (d dbSource) Message(ref Ref) (*store.Message, error) {
	var m *store.Message
	err := d.viewer.View(func(r *store.Reader) error {
		var err error
		m, err = r.Message(ref.Session, ref.Seq)
		return err
	})
	return m, err
}

func (d dbSource) Frames(session string, from, to uint64, fn func(seq uint64, frame []byte) error) error {
	for {
		hi := from + chunk - 1
		if to != 0 && hi > to {
			hi = to
		}
		var n int
		err := d.viewer.View(func(r *store.Reader) error {
			return r.Frames(session, from, hi, func(seq uint64, frame []byte) error {
				n++
				return fn(seq, frame)
			})
		})
		if err != nil || n == 0 || hi == to {
			return err
		}
		from = hi + 1
	}
}

func (d dbSource) HTTPBriefs(session string, seqs []uint64, fn func(seq uint64, b store.HTTPBrief) error) error {
	for len(seqs) > 0 {
		part := seqs[:min(len(seqs), chunk)]
		seqs = seqs[len(part):]
		err := d.viewer.View(func(r *store.Reader) error { return r.HTTPBriefs(session, part, fn) })
		if err != nil {
			return err
		}
	}
	return nil
}

func (d dbSource) Messages(session string, from, to uint64, fn func(m *store.Message) error) error {
	for {
		hi := from + chunk - 1
		if to != 0 && hi > to {
			hi = to
		}
		var n int
		err := d.viewer.View(func(r *store.Reader) error {
			return r.Messages(session, from, func(m *store.Message) error {
				if m.Seq > hi {
					return errStopScan
				}
				n++
				return fn(m)
			})
		})
		if err == errStopScan {
			err = nil
		}
		if err != nil || n == 0 || hi == to {
			return err
		}
		from = hi + 1
	}
}

// tapeSource serves a JSONL export read whole.
type tapeSource struct {
	tape  *store.Tape
	index map[string]int
}

func (t *tapeSource) Live() bool { return false }

// Poll reads what a JSONL export holds: it never grows, nor are its
// messages amended.
func (t *tapeSource) Poll(after Mark) (*Batch, error) {
	b := &Batch{Amends: after.Amends}
	for _, s := range t.tape.Sessions {
		b.Sessions = append(b.Sessions, s.Info)
		for _, msg := range s.Messages {
			if msg.Seq > after.Seqs[s.Info.ID] {
				b.Msgs = append(b.Msgs, BatchMsg{Session: s.Info.ID, Sum: store.Summarize(msg)})
			}
		}
	}
	return b, nil
}

func (t *tapeSource) session(id string) (*store.TapeSession, error) {
	i, ok := t.index[id]
	if !ok {
		return nil, fmt.Errorf("no session %q", id)
	}
	return &t.tape.Sessions[i], nil
}

func (t *tapeSource) Message(ref Ref) (*store.Message, error) {
	s, err := t.session(ref.Session)
	if err != nil {
		return nil, err
	}
	if ref.Seq == 0 || ref.Seq > uint64(len(s.Messages)) {
		return nil, fmt.Errorf("session %s has no message %d", ref.Session, ref.Seq)
	}
	return s.Messages[ref.Seq-1], nil
}

func (t *tapeSource) Frames(session string, from, to uint64, fn func(seq uint64, frame []byte) error) error {
	s, err := t.session(session)
	if err != nil {
		return err
	}
	for _, m := range s.Messages {
		if m.Seq < from || to != 0 && m.Seq > to {
			continue
		}
		if err := fn(m.Seq, m.Frame); err != nil {
			return err
		}
	}
	return nil
}

func (t *tapeSource) HTTPBriefs(session string, seqs []uint64, fn func(seq uint64, b store.HTTPBrief) error) error {
	s, err := t.session(session)
	if err != nil {
		return err
	}
	for _, seq := range seqs {
		if seq == 0 || seq > uint64(len(s.Messages)) {
			continue
		}
		if err := fn(seq, s.Messages[seq-1].HTTP.Brief()); err != nil {
			return err
		}
	}
	return nil
}

func (t *tapeSource) Messages(session string, from, to uint64, fn func(m *store.Message) error) error {
	s, err := t.session(session)
	if err != nil {
		return err
	}
	for _, m := range s.Messages {
		if m.Seq < from || to != 0 && m.Seq > to {
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Open reads a cassette (.db) or an export (.jsonl) into a new model. A
// foreign, newer or damaged file gives the store's one-line error.
func Open(path string) (*Model, Source, error) {
	if store.WholeFile(path) {
		tape, err := store.Load(path)
		if err != nil {
			return nil, nil, err
		}
		return OpenTape(path, tape)
	}
	m := NewModel(path)
	// Before the load: a file put there meanwhile is then found replaced
	// at the first poll, and read again.
	st, err := os.Stat(path)
	if err == nil {
		m.file = st
	}
	src := dbSource{path: path, viewer: store.NewViewer(path)}
	if err := m.loadDB(src.viewer); err != nil {
		return nil, nil, err
	}
	if err := m.resolveMalformed(src); err != nil {
		return nil, nil, err
	}
	return m, src, nil
}

// OpenTape makes a model of a tape read whole by the caller (a JSONL
// export on stdin), named name.
func OpenTape(name string, tape *store.Tape) (*Model, Source, error) {
	m := NewModel(name)
	src := &tapeSource{tape: tape, index: map[string]int{}}
	for i, s := range tape.Sessions {
		src.index[s.Info.ID] = i
	}
	b, _ := src.Poll(Mark{})
	if err := m.Apply(b, src); err != nil {
		return nil, nil, err
	}
	if err := m.resolveMalformed(src); err != nil {
		return nil, nil, err
	}
	return m, src, nil
}

// loadDB reads every summary straight into the model, without building a
// Batch: at a million messages the copies would cost more than the rows.
// It reads in chunks, each in a View of its own, so that recorders are not
// held off the file for long; v walks the page tree only when a recorder
// committed between two of them.
func (m *Model) loadDB(v *store.Viewer) error {
	var infos []store.SessionInfo
	last := map[string]uint64{}
	err := v.View(func(r *store.Reader) error {
		var err error
		if infos, err = r.Sessions(); err != nil {
			return err
		}
		for _, info := range infos {
			last[info.ID] = r.LastSeq(info.ID)
		}
		// Before the summaries, which later views read: an amendment
		// between is read then, and reported again at the first poll,
		// which does no harm.
		m.amends = r.AmendMark()
		return nil
	})
	if err != nil {
		return err
	}
	// The counts are known: sizing the row slices once saves the copies
	// (and the peak memory) of growing them a million rows at a time.
	total := 0
	for _, n := range last {
		total += int(n)
	}
	m.rows = growHuge(m.rows, total)
	// Every session's rows in a stretch of one table, which huge pages
	// can back (one session's alone may be smaller than a huge page); a
	// session that grows past its stretch (follow mode) moves out of it.
	sessRows := growHuge([]int32(nil), total)[:total]
	for _, info := range infos {
		sess := m.session(info)
		n := int(last[info.ID])
		m.sessRows[sess] = append(sessRows[:0:n], m.sessRows[sess]...)
		sessRows = sessRows[n:]
		for from := uint64(1); from <= last[info.ID]; from += chunk {
			err := v.View(func(r *store.Reader) error {
				return r.RawSummaries(info.ID, from, min(from+chunk-1, last[info.ID]), func(s *store.RawSummary) error {
					var frame []byte
					if addReadsFrame(s.Kind, s.Method) {
						var err error
						if frame, err = frameOf(r.Frames, info.ID, s.Seq); err != nil {
							return err
						}
					}
					m.add(sess, &s.Summary, s.Method, s.ID, s.Tool, frame)
					return nil
				})
			})
			if err != nil {
				return err
			}
		}
	}
	m.order = m.mergeByTime(0)
	m.refilterFields()
	return nil
}
