package replay

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// queue holds the messages of a legacy SSE stream (2024-11-05), which
// carries everything the session sends, until they are written. When the
// session ends, what it queued before goes out first, and then the
// stream closes (a session that expires after answering a call: the
// answer, then the end). The stream cannot be resumed: what is still
// queued when it closes with no client reading it, what fails to be
// written and what comes after is lost, and given to lost with why.
type queue struct {
	mu       sync.Mutex
	msgs     [][]byte
	ended    bool // closed: what is pushed now is lost
	attached bool // a stream will write what is queued (attach)
	wake     chan struct{}
	closed   chan struct{}
	once     sync.Once
	lost     func(msgs [][]byte, why string)
}

// Why a legacy stream's messages were lost.
const (
	whyStreamClosed = "the stream closed before they were written"
	whyNotRead      = "the client did not read its stream while 10000 more were queued"
)

// maxQueued bounds what waits for a client that never reads.
const maxQueued = 10000

var errQueueClosed = errors.New("session closed")

func newQueue(lost func(msgs [][]byte, why string)) *queue {
	return &queue{wake: make(chan struct{}, 1), closed: make(chan struct{}), lost: lost}
}

func (q *queue) push(msg []byte) error {
	q.mu.Lock()
	if q.ended {
		q.mu.Unlock()
		q.lost([][]byte{msg}, whyStreamClosed)
		return errQueueClosed
	}
	var dropped []byte
	if len(q.msgs) >= maxQueued {
		dropped = q.msgs[0]
		q.msgs = q.msgs[1:]
	}
	q.msgs = append(q.msgs, msg)
	q.mu.Unlock()
	if dropped != nil {
		q.lost([][]byte{dropped}, whyNotRead)
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

func (q *queue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.msgs
	q.msgs = nil
	return m
}

// close ends the stream: nothing more is queued, and what it holds is
// written by the stream's pump before it returns, or, with no client
// reading, lost.
func (q *queue) close() {
	q.once.Do(func() {
		q.mu.Lock()
		q.ended = true
		var left [][]byte
		if !q.attached {
			left, q.msgs = q.msgs, nil
		}
		q.mu.Unlock()
		close(q.closed)
		if len(left) > 0 {
			q.lost(left, whyStreamClosed)
		}
	})
}

// sseWriter writes Server-Sent Events, flushing after each.
type sseWriter struct {
	w  io.Writer
	fl http.Flusher
	n  int // legacy streams: event ids, counted per stream
}

func startSSE(w http.ResponseWriter, status int) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	s := &sseWriter{w: w, fl: fl}
	s.flush()
	return s
}

func (s *sseWriter) flush() {
	if s.fl != nil {
		s.fl.Flush()
	}
}

// event writes one event; an empty typ or id leaves that field out.
func (s *sseWriter) event(typ, id string, data []byte) error {
	b := make([]byte, 0, len(data)+len(typ)+len(id)+24)
	if typ != "" {
		b = append(append(append(b, "event: "...), typ...), '\n')
	}
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	_, err := s.w.Write(b)
	s.flush()
	return err
}

// prime writes a priming event: an id the client can resume from, and no
// message (2025-11-25).
func (s *sseWriter) prime(id string) error {
	_, err := fmt.Fprintf(s.w, "id: %s\ndata: \n\n", id)
	s.flush()
	return err
}

// counted writes a legacy stream's event, numbered per stream.
func (s *sseWriter) counted(typ string, data []byte) error {
	s.n++
	return s.event(typ, strconv.Itoa(s.n), data)
}

// attach marks the queue as having a stream to write it. The stream
// attaches before it names the session's endpoint: from then on the
// client may send, and the session may end, before its pump runs, and
// what the session queued must wait for the pump, not be lost to close.
// detach, once the stream is done, counts lost what an ended queue still
// holds.
func (q *queue) attach() {
	q.mu.Lock()
	q.attached = true
	q.mu.Unlock()
}

func (q *queue) detach() {
	q.mu.Lock()
	q.attached = false
	var left [][]byte
	if q.ended {
		left, q.msgs = q.msgs, nil
	}
	q.mu.Unlock()
	if len(left) > 0 {
		q.lost(left, whyStreamClosed)
	}
}

// pump writes queued messages as events until the client goes, stop
// ends, or the queue closes and what it held is written. What it took
// and could not write is lost. The stream attached before it.
func (q *queue) pump(sw *sseWriter, typ string, stop <-chan struct{}) {
	for ended := false; ; {
		msgs := q.take()
		for i, m := range msgs {
			if sw.counted(typ, m) != nil {
				q.lost(msgs[i:], whyStreamClosed) // the client is gone, and the stream with it
				return
			}
		}
		if ended {
			return
		}
		select {
		case <-q.wake:
		case <-q.closed:
			ended = true // one more round: what came before the end
		case <-stop:
			return
		}
	}
}
