package recorder

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// relaySSE forwards an event stream event by event, flushing after each,
// and records every event that carries data. Data-less events with an id
// (2025-11-25 priming events) are not messages; their ids go into the next
// recorded frame's Priming, or into the session's info when no frame
// follows them on the stream. The stream is never held whole: memory is one
// event.
func (x *exchange) relaySSE() {
	rc := http.NewResponseController(x.w)
	x.w.WriteHeader(x.resp.StatusCode)
	// Headers go out at once, even before any event: a long tool call may
	// send nothing for minutes, and clients time out waiting for headers
	// (undici's default is 300 s). Holding them to save one write per
	// answer hung TestHTTPProxy_ClientDisconnectCancelsUpstream.
	if rc.Flush() != nil {
		return
	}
	stream := "post-sse"
	if x.r.Method == http.MethodGet {
		stream = "get-sse"
	}
	hs := x.hs
	var priming []string
	retry := ""
	legacy := false
	defer func() {
		if len(priming) > 0 && hs != nil { // no frame came after them to carry them
			hs.keepPriming(store.StreamPriming{Stream: stream, StreamID: x.streamID, Path: x.base.Path, EventIDs: priming, Retry: retry})
		}
		if legacy {
			hs.end(x.streamEnd())
		}
	}()
	rd := sse.NewReader(x.resp.Body, 0)
	first := true
	for {
		ev, err := rd.Next()
		readAt := time.Now()
		if len(ev.Raw) > 0 {
			raw := ev.Raw
			if first {
				first = false
				if hs == nil && ev.Type == "endpoint" {
					// A legacy (2024-11-05) SSE connection: a session of its own.
					key, rewritten := x.legacyEndpoint(ev)
					hs = x.p.newLegacy(key)
					stream = "legacy-sse"
					if rewritten != nil {
						raw = rewritten
					}
					legacy = true
				}
				if hs == nil {
					hs = x.p.connSession(x.r)
				}
				if x.streamID == 0 {
					x.streamID = hs.streams.Add(1)
				}
			}
			if ev.Retry != "" {
				retry = ev.Retry
			}
			if ev.HasData && len(ev.Data) > 0 {
				m := x.meta(stream)
				m.EventID, m.EventType, m.Retry, m.Priming = ev.ID, ev.Type, retry, priming
				priming = nil
				hs.append(store.S2C, readAt, ev.Data, m)
			} else if ev.HasID {
				priming = append(priming, ev.ID)
			}
			if _, werr := x.w.Write(raw); werr != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, sse.ErrTooLong) {
				// Too big to parse: keep the stream going byte for byte.
				x.p.logf("mcpspy: %v on %s; forwarding the rest of the stream unrecorded", err, x.base.Path)
				if _, werr := x.w.Write(rd.Buffered()); werr == nil {
					_, _ = io.Copy(flushWriter{x.w, rc}, x.resp.Body)
				}
			}
			return
		}
	}
}

// streamEnd says why a legacy SSE connection (and so its session) ended.
func (x *exchange) streamEnd() store.EndInfo {
	x.p.mu.Lock()
	closing := x.p.closing
	x.p.mu.Unlock()
	switch {
	case closing:
		return store.EndInfo{Reason: store.EndSignal, Signal: "mcpspy interrupted"}
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
