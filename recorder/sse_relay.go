package recorder

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// relaySSE forwards an event stream event by event, flushing after each,
// and records every event that carries data. The stream is never held
// whole: memory is one event. A compressed stream goes to relayEncodedSSE.
func (x *exchange) relaySSE() {
	rc := http.NewResponseController(x.w)
	coding := contentCoding(x.resp.Header)
	if coding != "" && x.mayBeLegacy() && canRecode(coding) {
		// relayEncodedSSE may compress it anew: its length is unknown.
		x.w.Header().Del("Content-Length")
	}
	x.w.WriteHeader(x.resp.StatusCode)
	// Headers go out before the relay waits for the first event: a long
	// tool call may send nothing for minutes, and clients time out
	// waiting for headers (undici's default is 300 s). Holding them to
	// save one write per answer hung
	// TestHTTPProxy_ClientDisconnectCancelsUpstream.
	//
	// On the proxy's own upstream connection that is done by flushing
	// before every read from the network: each event still leaves before
	// the relay waits for more, and the headers and events that came in
	// one read leave in one write. Otherwise, a flush after each.
	flushEach := true
	if ub, ok := x.resp.Body.(*upstreamBody); ok {
		defer ub.flushBeforeRead(func() { _ = rc.Flush() })()
		flushEach = false
	} else if rc.Flush() != nil {
		return
	}
	if coding != "" {
		x.relayEncodedSSE(rc, coding)
		return
	}
	rec := x.newSSERecorder()
	defer rec.finish()
	rd := sse.NewReader(x.resp.Body, 0)
	defer rd.Release()
	rd.BeforeLongEvent(x.p.beforeLongEvent)
	for {
		ev, err := rd.Next()
		if len(ev.Raw) > 0 {
			raw := rec.event(ev, time.Now())
			if _, werr := x.w.Write(raw); werr != nil {
				return
			}
			if flushEach && rc.Flush() != nil {
				return
			}
		}
		if err != nil {
			rec.ended = errors.Is(err, io.EOF)
			if errors.Is(err, sse.ErrTooLong) {
				// Too big to parse: keep the stream going byte for byte.
				x.p.logf("mcpspy: %v on %s; forwarding the rest of the stream unrecorded", err, x.base.Path)
				rec.carried = true // not a stream without messages: one too long to record
				if _, werr := x.w.Write(rd.Buffered()); werr == nil {
					_, err = io.Copy(flushWriter{x.w, rc}, x.resp.Body)
					x.abortIfCut(err)
				}
				return
			}
			x.abortIfCut(err)
			return
		}
	}
}

// maxAnswerScan bounds the event isAnswer reads, on the relay's path: a
// notification is small, an answer may be megabytes.
const maxAnswerScan = 4 << 10

// isAnswer says whether an event's data is a response, an error, or a
// batch of them.
func isAnswer(data []byte) bool {
	switch jsonrpc.Classify(data).Kind {
	case jsonrpc.Response, jsonrpc.Error, jsonrpc.Batch:
		return true
	}
	return false
}

// sseRecorder records the events of one stream. Data-less events with an
// id (2025-11-25 priming events) are not messages; their ids go into the
// next recorded frame's Priming, or into the session's info when no frame
// follows them on the stream.
type sseRecorder struct {
	x       *exchange
	hs      *httpSession
	stream  string
	priming []string
	retry   string
	started bool // the first event has been seen
	carried bool // a message has been recorded from it
	ended   bool // the upstream ended it (not the client, nor a cut)
	// answered: it carried a response (or an event too big to look at,
	// which is nearly always one).
	answered bool
	legacy   bool // the stream is a legacy SSE connection, and so its session
	rewrote  bool // its endpoint event was rewritten to the proxy
}

// mayBeLegacy says whether x's event stream may be a legacy (2024-11-05)
// SSE connection: a GET outside any session. Its first event tells.
func (x *exchange) mayBeLegacy() bool { return x.hs == nil }

func (x *exchange) newSSERecorder() *sseRecorder {
	stream := store.StreamPostSSE
	if x.r.Method == http.MethodGet {
		stream = store.StreamGetSSE
	}
	return &sseRecorder{x: x, hs: x.hs, stream: stream}
}

// event records ev, read at readAt, and returns the bytes to forward: the
// event as it came, or a legacy endpoint event rewritten to the proxy.
func (s *sseRecorder) event(ev sse.Event, readAt time.Time) []byte {
	x, raw := s.x, ev.Raw
	if !s.started {
		s.started = true
		if x.mayBeLegacy() && ev.Type == "endpoint" {
			// A legacy (2024-11-05) SSE connection: a session of its own.
			key, rewritten := x.legacyEndpoint(ev)
			s.hs = x.p.newLegacy(key)
			s.stream = store.StreamLegacySSE
			s.legacy = true
			if rewritten != nil {
				raw, s.rewrote = rewritten, true
			}
		}
		if s.hs == nil {
			s.hs = x.p.connSession(x.r)
		}
		if x.streamID == 0 {
			x.streamID = s.hs.streams.Add(1)
		}
	}
	if ev.Retry != "" {
		s.retry = ev.Retry
	}
	if ev.HasData && len(ev.Data) > 0 {
		m := x.meta(s.stream)
		m.EventID, m.EventType, m.Retry, m.Priming = ev.ID, ev.Type, s.retry, s.priming
		s.priming = nil
		s.carried = true
		if !s.answered {
			s.answered = len(ev.Data) > maxAnswerScan || isAnswer(ev.Data)
		}
		s.hs.append(store.S2C, readAt, ev.Data, m)
	} else if ev.HasID {
		s.priming = append(s.priming, ev.ID)
	}
	return raw
}

// finish runs when the stream has ended.
func (s *sseRecorder) finish() {
	if s.hs == nil && s.x.r.Header.Get(headerSessionID) == "" {
		// A GET without a session id whose stream carried nothing at
		// all (a TypeScript SDK server without sessions keeps one open,
		// empty): on record in its connection's session, as a refused
		// one is. (The connection closes only after this handler ends.)
		s.hs = s.x.p.connSession(s.x.r)
		s.x.hs, s.x.streamID = s.hs, s.hs.streams.Add(1)
	}
	// A stream of priming events only is in the info already.
	if !s.carried && (s.x.sent.recorded() || len(s.priming) == 0) {
		note := "its event stream ended without a message"
		if s.x.r.Context().Err() != nil {
			note = store.NoteLeftEmptyStream
		}
		s.x.answeredBare(s.stream, note)
	}
	if s.carried && !s.ended && !s.answered && s.x.r.Context().Err() != nil {
		// The client closed the stream partway, before the answer: in
		// 2026-07-28, that cancels the request. (A client that reads
		// the answer and closes before the server ends the stream, as
		// go-sdk's may, cancels nothing.)
		s.x.sent.answered(s.x.base.Status, s.x.base.ResponseHeader, store.NoteLeftStream)
	}
	if len(s.priming) > 0 && s.hs != nil { // no frame came after them to carry them
		s.hs.keepPriming(store.StreamPriming{Stream: s.stream, StreamID: s.x.streamID, Path: s.x.base.Path, EventIDs: s.priming, Retry: s.retry})
	}
	if s.legacy {
		s.hs.end(s.x.streamEnd())
	}
}

// streamEnd says why a legacy SSE connection (and so its session) ended.
func (x *exchange) streamEnd() store.EndInfo {
	switch {
	case x.p.gate.closed():
		return interrupted
	case x.r.Context().Err() != nil:
		return store.EndInfo{Reason: store.EndEOF}
	}
	return store.EndInfo{Reason: store.EndClosed}
}

type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}
