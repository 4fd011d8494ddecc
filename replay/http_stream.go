package replay

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Resumable event streams for Streamable HTTP sessions (2025-03-26 …
// 2025-11-25). Every event mcpmock sends on a session's GET stream or on a
// POST's event-stream answer gets an id "<stream>-<n>": stream 0 is the GET
// stream, POST answers are numbered from 1 in the order they start; n counts
// the stream's events from 1 (0 is a priming event's, which carries no
// message). A session keeps its recent events so that a GET with
// Last-Event-ID replays what followed that event on the same stream.

// Bounds on what a session keeps for resumption. GET-stream events nobody
// has read yet count too: they wait in the same log.
const (
	keepEvents = maxQueued
	keepBytes  = 16 << 20
)

var (
	errUnknownEvent = errors.New("no such event in this session")
	errEventsGone   = errors.New("the events after it are no longer kept")
)

// eventLog is one session's event streams.
type eventLog struct {
	// lost is given the GET-stream messages no client was sent, and why:
	// those still waiting when the session ends, those pushed after, and
	// those dropped as the log outgrew its bounds.
	lost func(msgs [][]byte, why string)

	get *evStream // stream 0

	mu      sync.Mutex
	streams map[int]*evStream
	next    int         // the last POST stream number handed out
	order   []*evStream // one entry per kept event, oldest first
	bytes   int
	closed  bool
	end     chan struct{} // closed with the session
}

// evStream is one logical stream: its kept events and who writes it.
type evStream struct {
	id    int
	first int      // n of evs[0]
	last  int      // n of the newest event, kept or not
	evs   [][]byte // kept events, oldest first
	sent  int      // the GET stream: the newest event written to a client
	done  bool     // a POST stream: its answer is out, nothing follows
	// changed is closed (and replaced) when an event arrives or the
	// stream is done.
	changed chan struct{}
	// writer is the one connection writing this stream now.
	writer *streamWriter
}

// streamWriter is a claim on a stream: one connection writes it at a time,
// and a client resuming it takes it over from a connection it abandoned.
type streamWriter struct {
	stop     chan struct{} // closed when another connection takes over
	released chan struct{} // closed when this one has stopped writing
	once     sync.Once
}

// Why a GET stream's messages were lost.
const (
	whyNoGETStream = "it had no GET stream open before the session ended"
	whyFellBehind  = "the client fell behind its GET stream by more than the 10000 events or 16 MiB kept"
)

func newEventLog(lost func(msgs [][]byte, why string)) *eventLog {
	l := &eventLog{lost: lost, streams: map[int]*evStream{}, end: make(chan struct{})}
	l.get = &evStream{changed: make(chan struct{})}
	l.streams[0] = l.get
	return l
}

func eventID(stream, n int) string { return strconv.Itoa(stream) + "-" + strconv.Itoa(n) }

// openPOST starts the stream of a POST's event-stream answer.
func (l *eventLog) openPOST() *evStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	st := &evStream{id: l.next, changed: make(chan struct{})}
	l.streams[st.id] = st
	return st
}

// push queues a session-level message on the GET stream.
func (l *eventLog) push(msg []byte) error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		l.lost([][]byte{msg}, whyNoGETStream)
		return errQueueClosed
	}
	l.append(l.get, msg)
	return nil
}

// sentUpTo is the newest GET-stream event a client was sent.
func (l *eventLog) sentUpTo() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.get.sent
}

// append adds an event and returns its n. Past the log's bounds the
// oldest events go; a GET-stream event no client was sent is lost (a
// POST stream's were written to its client as they came).
func (l *eventLog) append(st *evStream, msg []byte) int {
	l.mu.Lock()
	st.last++
	if len(st.evs) == 0 {
		st.first = st.last
	}
	st.evs = append(st.evs, msg)
	l.order = append(l.order, st)
	l.bytes += len(msg)
	var unsent [][]byte
	for len(l.order) > 1 && (len(l.order) > keepEvents || l.bytes > keepBytes) {
		if ev, ok := l.dropOldest(); !ok {
			unsent = append(unsent, ev)
		}
	}
	st.wakeLocked()
	n := st.last
	l.mu.Unlock()
	if len(unsent) > 0 {
		l.lost(unsent, whyFellBehind)
	}
	return n
}

// dropOldest drops the log's oldest event, and says whether it was sent:
// false only for a GET-stream event no client was sent.
func (l *eventLog) dropOldest() (ev []byte, sent bool) {
	st := l.order[0]
	l.order[0] = nil
	l.order = l.order[1:]
	ev = st.evs[0]
	l.bytes -= len(ev)
	st.evs[0] = nil
	st.evs = st.evs[1:]
	sent = st.id != 0 || st.first <= st.sent
	st.first++
	if st.done && len(st.evs) == 0 {
		delete(l.streams, st.id)
	}
	return ev, sent
}

func (st *evStream) wakeLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// finish marks a POST stream's answer as sent.
func (l *eventLog) finish(st *evStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st.done = true
	if len(st.evs) == 0 {
		delete(l.streams, st.id)
	}
	st.wakeLocked()
}

// close ends every stream: the session is gone.
// close ends the session's streams. The GET stream's kept events no
// client was sent are lost: the session's client never opened a GET
// stream, or left it before they came.
func (l *eventLog) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	close(l.end)
	var unsent [][]byte
	for i, ev := range l.get.evs {
		if l.get.first+i > l.get.sent {
			unsent = append(unsent, ev)
		}
	}
	l.mu.Unlock()
	if len(unsent) > 0 {
		l.lost(unsent, whyNoGETStream)
	}
}

// after returns the kept events of st that follow event n, the n of the
// first of them, and a channel closed when more arrive.
func (l *eventLog) after(st *evStream, n int) (evs [][]byte, first int, changed <-chan struct{}, done bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < st.last && n+1 < st.first {
		return nil, 0, nil, false, errEventsGone
	}
	if n < st.last {
		evs = append(evs, st.evs[n+1-st.first:]...)
	}
	return evs, n + 1, st.changed, st.done, nil
}

// markSent notes that the GET stream's events up to n reached a client,
// and says whether the session had ended already.
func (l *eventLog) markSent(st *evStream, n int) (ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > st.sent {
		st.sent = n
	}
	return l.closed
}

// unmarkSent takes back markSent's note for event n, whose write failed.
// If the session ended after the mark (not ended when marked), its end
// took n as sent: n is counted lost now.
func (l *eventLog) unmarkSent(st *evStream, n int, msg []byte, endedWhenMarked bool) {
	l.mu.Lock()
	closed := l.closed
	if st.sent == n {
		st.sent = n - 1
	}
	l.mu.Unlock()
	if closed && !endedWhenMarked {
		l.lost([][]byte{msg}, whyNoGETStream)
	}
}

// resumePoint finds the stream and position a Last-Event-ID names.
func (l *eventLog) resumePoint(lastEventID string) (*evStream, int, error) {
	s, n, ok := strings.Cut(strings.TrimSpace(lastEventID), "-")
	stream, err1 := strconv.Atoi(s)
	pos, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || stream < 0 || pos < 0 {
		return nil, 0, fmt.Errorf("malformed event id %q (mcpmock's are STREAM-N)", lastEventID)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.streams[stream]
	switch {
	case st == nil && stream > 0 && stream <= l.next:
		return nil, 0, fmt.Errorf("event %s: stream %d has ended and %w", lastEventID, stream, errEventsGone)
	case st == nil, pos > st.last:
		return nil, 0, fmt.Errorf("event %s: %w", lastEventID, errUnknownEvent)
	case pos < st.last && pos+1 < st.first:
		return nil, 0, fmt.Errorf("event %s: %w", lastEventID, errEventsGone)
	}
	return st, pos, nil
}

// claim makes w the stream's writer. With takeOver the current writer is
// stopped and awaited; without, claim fails if there is one.
func (l *eventLog) claim(st *evStream, takeOver bool) (*streamWriter, bool) {
	w := &streamWriter{stop: make(chan struct{}), released: make(chan struct{})}
	for {
		l.mu.Lock()
		cur := st.writer
		if cur == nil {
			st.writer = w
			l.mu.Unlock()
			return w, true
		}
		l.mu.Unlock()
		if !takeOver {
			return nil, false
		}
		cur.once.Do(func() { close(cur.stop) })
		<-cur.released
	}
}

// claimFresh makes w the writer of a stream that has none yet.
func (l *eventLog) claimFresh(st *evStream, w *streamWriter) {
	l.mu.Lock()
	st.writer = w
	l.mu.Unlock()
}

// release gives up the claim.
func (l *eventLog) release(st *evStream, w *streamWriter) {
	l.mu.Lock()
	if st.writer == w {
		st.writer = nil
	}
	l.mu.Unlock()
	close(w.released)
}

// pump writes st's events after n to sw until the stream is done, the
// client goes, another connection takes the stream over or the session
// ends.
func (l *eventLog) pump(sw *sseWriter, st *evStream, n int, w *streamWriter, gone <-chan struct{}) {
	for {
		evs, first, changed, done, err := l.after(st, n)
		if err != nil {
			return // fell too far behind while writing: the client may resume elsewhere
		}
		for i, m := range evs {
			// Marked before it is written: a client that reads it may end
			// the session (DELETE) before the write returns, and the
			// session's end must not count it as never sent.
			ended := false // when marked: the session's end counted it already
			if st.id == 0 {
				ended = l.markSent(st, first+i)
			}
			if sw.event("message", eventID(st.id, first+i), m) != nil {
				if st.id == 0 {
					l.unmarkSent(st, first+i, m, ended)
				}
				return
			}
			n = first + i
		}
		if len(evs) > 0 {
			continue
		}
		if done {
			return
		}
		select {
		case <-changed:
		case <-gone:
			return
		case <-w.stop:
			return
		case <-l.end:
			return
		}
	}
}

// primes says whether a client of this protocol version expects a priming
// event (an id and no message) first on every event stream: 2025-11-25
// servers send one; 2026-07-28 has no resumption.
func primes(version string) bool {
	return version >= "2025-11-25" && version < statelessVersion
}

// serveResume answers a GET with Last-Event-ID: the events that followed it
// on its stream, then, for the GET stream, whatever comes next. A POST
// stream the client already had whole is held open until the client goes.
func (s *Server) serveResume(w http.ResponseWriter, r *http.Request, h *httpSession, lastEventID string) {
	st, n, err := h.log.resumePoint(lastEventID)
	if err != nil {
		s.warnf("session %s: cannot resume: %v", h.id, err)
		http.Error(w, "Bad Request: cannot resume: "+err.Error(), http.StatusBadRequest)
		return
	}
	wr, _ := h.log.claim(st, true)
	defer h.log.release(st, wr)
	w.Header().Set(sessionHeader, h.id)
	sw := startSSE(w, http.StatusOK)
	if evs, _, _, done, err := h.log.after(st, n); err == nil && done && len(evs) == 0 {
		// The client had the whole stream, answer included, and resumes it
		// anyway: the TS SDK client does after an answer that is an error.
		// Keep the stream open, as the TS SDK's own server does; ending it
		// sends that client into reconnecting with a plain GET (409 while
		// the session's GET stream is open) until it gives up.
		select {
		case <-r.Context().Done():
		case <-wr.stop:
		case <-h.log.end:
		}
		return
	}
	h.log.pump(sw, st, n, wr, r.Context().Done())
}
