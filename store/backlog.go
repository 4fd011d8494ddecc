package store

// WaitBacklog waits until the writer has stored as many frame bytes as
// were waiting for it when WaitBacklog was called, whichever sessions
// appended them, or until it is closed. What is appended meanwhile does
// not hold it longer, so a busy session cannot keep it waiting.
//
// A recorder calls it before it reads the rest of a long frame: the
// frames waiting for the store, and the copy of them a commit makes, are
// then gone before the new frame takes as much memory again, and a run of
// long frames costs what one does (DESIGN.md, "Flat memory"). While
// commits fail it waits for one that works, as Append does past
// MaxPending.
func (s *Session) WaitBacklog() {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waitStoredLocked(w.appendedBytes)
}

// waitStoredLocked waits until storedBytes reaches target or the writer
// is closed; w.mu is held.
func (w *Writer) waitStoredLocked(target uint64) {
	for w.storedBytes < target && !w.closed {
		w.kickLocked()
		w.room.Wait()
	}
}
