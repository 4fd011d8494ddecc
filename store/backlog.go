package store

import "time"

// maxBacklogWait bounds one WaitBacklog: a store slower than that (a slow
// disk, a cassette busy with other recorders) holds the traffic no longer,
// and what waits is buffered, as DESIGN.md's "Nothing lost" wants, up to
// MaxPending. A variable, so tests can make it outlast them.
var maxBacklogWait = 2 * time.Second

// WaitBacklog waits until the writer has stored as many frame bytes as
// were waiting for it when WaitBacklog was called, whichever sessions
// appended them, or until it is closed. What is appended meanwhile does
// not hold it longer, so a busy session cannot keep it waiting.
//
// A recorder calls it before it reads the rest of a long frame: the
// frames waiting for the store, and the copy of them a commit makes, are
// then gone before the new frame takes as much memory again, and a run of
// long frames costs what one does (DESIGN.md, "Flat memory"). It waits no
// longer than maxBacklogWait, and not at all while commits fail: memory
// is spent rather than the traffic stalled behind a store that is stuck.
func (s *Session) WaitBacklog() {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waitStoredLocked(w.appendedBytes, maxBacklogWait)
}

// waitStoredLocked waits until storedBytes reaches target, a commit
// fails, limit passes or the writer is closed; w.mu is held.
func (w *Writer) waitStoredLocked(target uint64, limit time.Duration) {
	expired := false
	timer := time.AfterFunc(limit, func() {
		w.mu.Lock()
		expired = true
		w.room.Broadcast()
		w.mu.Unlock()
	})
	defer timer.Stop()
	for w.storedBytes < target && !w.closed && !w.commitFailing && !expired {
		w.kickLocked()
		w.room.Wait()
	}
}
