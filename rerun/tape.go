package rerun

import (
	"sync"
	"time"

	"github.com/mcptape/mcptape/store"
)

// tape keeps the rerun's frames in memory, as a recorder's Tap: the stdio
// recorder appends what passes through it, the HTTP client what it sends
// and receives.
type tape struct {
	mu   sync.Mutex
	info store.SessionInfo
	msgs []*store.Message
}

func newTape(transport, upstream string) *tape {
	return &tape{info: store.SessionInfo{
		ID: "rerun", Transport: transport, Upstream: upstream, Start: time.Now(), Recorder: "mcpspy rerun",
	}}
}

// Append implements recorder.Tap. The frame is the tape's from now on.
func (t *tape) Append(dir store.Dir, at time.Time, frame []byte, meta *store.HTTPMeta) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	seq := uint64(len(t.msgs) + 1)
	t.msgs = append(t.msgs, &store.Message{Session: t.info.ID, Seq: seq, Dir: dir, Time: at, Frame: frame, HTTP: meta})
	return seq
}

// AmendMeta implements recorder.Amender: meta and note take the place of
// those of the frame Append gave seq, in a copy of its message (one
// session handed out may hold the first).
func (t *tape) AmendMeta(seq uint64, meta *store.HTTPMeta, note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if seq >= 1 && seq <= uint64(len(t.msgs)) {
		m := *t.msgs[seq-1]
		m.HTTP, m.Note = meta, note
		t.msgs[seq-1] = &m
	}
}

// setTransport corrects the transport the session is known by: a server
// at a URL may turn out to speak the legacy one.
func (t *tape) setTransport(transport string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.info.Transport = transport
}

// session is the tape as a recorded session that ended with end.
func (t *tape) session(end store.EndInfo) store.TapeSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	info := t.info
	if end.Time.IsZero() {
		end.Time = time.Now()
	}
	info.End = &end
	return store.TapeSession{Info: info, Messages: append([]*store.Message(nil), t.msgs...)}
}
