package fallback

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// Recording the sessions with the real server: each becomes a session
// of the cassette once the server has said something.

// nopTap records nothing, when there is no cassette for new sessions.
type nopTap struct{}

func (nopTap) Append(store.Dir, time.Time, []byte, *store.HTTPMeta) uint64 { return 0 }

func (u *upstream) endRecording(end store.EndInfo) {
	if u.rec != nil {
		u.rec.end(end)
	}
}

// sessionTap records into a new session of the cassette, created when the
// server first says something: a server that never answered (it did not
// start, or was not there) leaves no empty session behind.
type sessionTap struct {
	src  *Source
	info store.SessionInfo

	mu   sync.Mutex
	sess *store.Session
	held []*store.Message // what was sent before the server spoke
	// heldSeqs are the seqs the held messages were appended as, in
	// order, once the server spoke: an amendment of one may come later.
	heldSeqs []uint64
	failed   bool
	// unasked are mcpmock's own answers to server requests it did not
	// ask the client (notAsked), until they are recorded; noted, the
	// seqs they were recorded as, so that what the recording client
	// records of them again (an HTTP status) keeps the note.
	unasked [][]byte
	noted   map[uint64]bool
}

// notAsked says that frame, about to be sent, is mcpmock's answer to a
// server request its client was not asked: it is recorded with
// replay.NoteNotAsked, which a replay reads to leave the exchange out.
func (t *sessionTap) notAsked(frame []byte) {
	if t == nil {
		return // not recording
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unasked = append(t.unasked, frame)
}

// takeUnasked says whether frame is one notAsked was told of, and
// forgets it.
func (t *sessionTap) takeUnasked(frame []byte) bool {
	for i, f := range t.unasked {
		if bytes.Equal(f, frame) {
			t.unasked = slices.Delete(t.unasked, i, i+1)
			return true
		}
	}
	return false
}

// The recording clients wait on a Tap with this method (recorder's
// waitTap) before they read on into a long frame.
var _ interface{ WaitBacklog() } = (*sessionTap)(nil)

// WaitBacklog waits until the session's writer has stored what it was
// given, as *store.Session does, so that the recording clients take a
// run of long frames one at a time (recorder's waitTap); before the
// server first spoke there is no session, and nothing to wait for.
func (t *sessionTap) WaitBacklog() {
	t.mu.Lock()
	sess := t.sess
	t.mu.Unlock()
	if sess != nil {
		sess.WaitBacklog()
	}
}

// Append implements recorder.Tap.
func (t *sessionTap) Append(dir store.Dir, at time.Time, frame []byte, meta *store.HTTPMeta) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil && !t.failed {
		if dir == store.C2S {
			t.held = append(t.held, &store.Message{Dir: dir, Time: at, Frame: frame, HTTP: meta})
			return heldSeq(len(t.held))
		}
		// Started, not made: this is the server's first frame, on its way
		// to the client, and NewSession waits for the file.
		sess, err := t.src.w.StartSession(t.info)
		if err != nil {
			t.failed = true
			t.src.noteRecErr(err)
			t.src.warnf("this session is not recorded: %v", err)
			return 0
		}
		t.sess = sess
		for _, m := range t.held {
			seq := sess.Append(m.Dir, m.Time, m.Frame, m.HTTP)
			t.heldSeqs = append(t.heldSeqs, seq)
			if m.Note != "" { // Append takes none: an amend held back
				// The same meta twice: the store only reads it.
				sess.AmendMeta(seq, m.HTTP, m.Note)
			}
		}
		t.held = nil
	}
	if t.sess == nil {
		return 0
	}
	seq := t.sess.Append(dir, at, frame, meta)
	// An answer to a server request: the server has spoken, so it is not
	// held.
	if dir == store.C2S && len(t.unasked) > 0 && t.takeUnasked(frame) {
		// Append takes no note. The same meta twice: the store only
		// reads it.
		t.sess.AmendMeta(seq, meta, replay.NoteNotAsked)
		if t.noted == nil {
			t.noted = map[uint64]bool{}
		}
		t.noted[seq] = true
	}
	return seq
}

// heldBit marks the seqs Append gives the frames it holds (the server has
// not spoken): a session's seqs never reach it. The rest is the frame's
// place in held, from 1.
const heldBit = 1 << 63

func heldSeq(n int) uint64 { return heldBit | uint64(n) }

var _ recorder.Amender = (*sessionTap)(nil)

// AmendMeta implements recorder.Amender. A frame held when Append gave it
// seq is found by its place among the held: while held, it takes meta and
// note itself; since appended, the seq it was appended as is amended.
func (t *sessionTap) AmendMeta(seq uint64, meta *store.HTTPMeta, note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if seq&heldBit != 0 {
		i := int(seq&^heldBit) - 1
		switch {
		case t.sess == nil && i >= 0 && i < len(t.held):
			t.held[i].HTTP, t.held[i].Note = meta, note
			return
		case t.sess != nil && i >= 0 && i < len(t.heldSeqs):
			seq = t.heldSeqs[i]
		default:
			return
		}
	}
	if t.sess == nil || seq == 0 {
		return
	}
	if t.noted[seq] {
		note = withNotAsked(note)
	}
	t.sess.AmendMeta(seq, meta, note)
}

// withNotAsked is note (the recording client's, perhaps none) after
// replay.NoteNotAsked, which must come first.
func withNotAsked(note string) string {
	if note == "" {
		return replay.NoteNotAsked
	}
	return replay.NoteNotAsked + "; " + note
}

// becameLegacy notes that the server at a URL turned out to speak the
// 2024-11-05 transport, before anything of the session is stored.
func (t *sessionTap) becameLegacy() {
	if t == nil {
		return // not recording
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.info.Transport = store.TransportLegacySSE
}

func (t *sessionTap) end(e store.EndInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return
	}
	// Not End: the writer's next commit stores the end, and its Close
	// (Source.Close) reports a commit that never succeeded.
	t.sess.Finish(e)
}
