package recorder

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/chunkfeed"
	"github.com/mcptape/mcptape/internal/sse"
)

// relayEncodedSSE forwards a compressed event stream (an upstream with
// gzip middleware answers so when the client accepts it) and records the
// events of a decompressed copy. A chunk is forwarded only after every
// event it completes has been recorded, so seq keeps causal order as on a
// plain stream.
//
// The client gets the bytes as they came, chunk by chunk, flushed after
// each, but for one case: a legacy stream whose endpoint event names the
// upstream by an absolute URI, which must be rewritten to the proxy (see
// legacyEndpoint) or the client would post past it. That stream is
// decompressed, the event rewritten as on a plain stream, and compressed
// anew in the same coding, flushed after every event. Which case it is
// shows in the first event, so the compressed bytes of a stream that may
// be legacy are held until that event is read (one event; Content-Length
// was dropped for such a stream, as it may change).
//
// A stream whose coding mcpspy cannot read (compress, say) or that does not
// decompress is forwarded as it came from that point on and recorded no
// further, with a warning; an endpoint event in it is not rewritten. A
// stream compressed anew that stops decompressing cannot go on as it came:
// the client gets the events read until then and a cut connection.
func (x *exchange) relayEncodedSSE(rc *http.ResponseController, coding string) {
	feed := chunkfeed.New()
	st := &recoding{undecided: x.mayBeLegacy()}
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		defer feed.Discard() // the relay never waits on a parser that stopped
		defer func() { st.stopped = true }()
		x.parseEncodedSSE(feed, coding, st)
	}()
	buf := make([]byte, 32<<10)
	var held []byte // the upstream's bytes until the first event tells
	var err error
	clientGone := false
	for {
		var n int
		n, err = x.resp.Body.Read(buf)
		if n > 0 {
			feed.Put(buf[:n])
			// The parser has used the chunk up (or stopped): st is the
			// relay's until the next Put.
			out := buf[:n]
			switch {
			case st.enc != nil:
				out, held = st.take(), nil
			case st.undecided && !st.stopped:
				held, out = append(held, out...), nil
			case held != nil:
				out, held = append(held, out...), nil
			}
			if len(out) > 0 {
				if _, werr := x.w.Write(out); werr != nil || rc.Flush() != nil {
					clientGone = true
					break
				}
			}
			if st.enc != nil && st.stopped {
				err = nil // what follows the compressed stream, if anything, cannot be told apart from it
				break
			}
		}
		if err != nil {
			break
		}
	}
	feed.Close()
	<-parsed
	if clientGone {
		return // nothing to tell it
	}
	switch {
	case st.enc != nil:
		if _, werr := x.w.Write(st.take()); werr != nil {
			return
		}
		if !st.whole {
			// Cut, so that the client cannot take what it got for the
			// whole stream.
			_ = rc.Flush()
			panic(http.ErrAbortHandler)
		}
	case held != nil:
		if _, werr := x.w.Write(held); werr != nil {
			return
		}
	}
	x.abortIfCut(err)
}

// recoding is what the parser of a compressed stream tells the relay. The
// chunk feed orders their turns: the parser runs only while the relay is
// inside Put (or after Close), the relay reads only between Puts.
type recoding struct {
	undecided bool         // the stream may be legacy and its first event is still to come
	enc       encoder      // not nil: the stream is compressed anew, into out
	out       bytes.Buffer // enc's output that the relay has not taken yet
	whole     bool         // the stream compressed anew ended whole
	stopped   bool         // the parser has stopped
}

// take returns what the encoder has written since the last take; the
// bytes are good until the parser runs again.
func (st *recoding) take() []byte {
	b := st.out.Bytes()
	st.out.Reset()
	return b
}

// write compresses b and flushes the encoder, so that the client can read
// b as soon as it gets what take returns.
func (st *recoding) write(b []byte) {
	// Writes into a bytes.Buffer do not fail.
	_, _ = st.enc.Write(b)
	_ = st.enc.Flush()
}

// notRewritten is what a warning adds when the stream stops being parsed
// before its first event: it may be a legacy stream whose endpoint event
// should have been rewritten.
func (st *recoding) notRewritten() string {
	if st.undecided {
		return "; an endpoint event in it could not be rewritten to the proxy, so a legacy client may post past it, unrecorded"
	}
	return ""
}

// parseEncodedSSE decompresses src, records its events and, once the
// first event was rewritten, compresses them anew into st.
func (x *exchange) parseEncodedSSE(src io.Reader, coding string, st *recoding) {
	zr, err := newDecoder(coding, src)
	if err != nil {
		x.p.logf("mcpspy: %s stream on %s: %v; forwarding it unrecorded%s", coding, x.base.Path, err, st.notRewritten())
		return
	}
	defer zr.Close()
	rec := x.newSSERecorder()
	defer rec.finish()
	rd := sse.NewReader(zr, 0)
	defer rd.Release()
	rd.BeforeLongEvent(x.p.beforeLongEvent)
	for {
		ev, err := rd.Next()
		if len(ev.Raw) > 0 {
			raw := rec.event(ev, time.Now())
			if st.undecided {
				st.undecided = false
				if rec.rewrote {
					st.enc, _ = newEncoder(coding, &st.out) // a coding newDecoder read
				}
			}
			if st.enc != nil {
				st.write(raw)
			}
		}
		if errors.Is(err, sse.ErrTooLong) {
			rec.carried = true // not a stream without messages: one too long to record
		}
		if errors.Is(err, sse.ErrTooLong) && st.enc != nil {
			// Too big to parse: the rest goes on compressed anew, unparsed.
			x.p.logf("mcpspy: %s stream on %s: %v; forwarding the rest unrecorded", coding, x.base.Path, err)
			st.write(rd.Buffered())
			_, err = io.Copy(recodeWriter{st}, zr)
			if err == nil {
				err = io.EOF
			}
		}
		if err == nil {
			continue
		}
		// EOF ends the stream; a truncated one (the upstream or the client
		// went away) is no news either.
		switch {
		case errors.Is(err, io.EOF):
			if st.enc != nil {
				st.whole = st.enc.Close() == nil
			}
		case errors.Is(err, io.ErrUnexpectedEOF):
		case errors.Is(err, sse.ErrTooLong):
			x.p.logf("mcpspy: %s stream on %s: %v; forwarding the rest unrecorded%s", coding, x.base.Path, err, st.notRewritten())
		case st.enc != nil:
			x.p.logf("mcpspy: %s stream on %s: %v; its endpoint event was rewritten, so the rest cannot be forwarded as it came: cutting the stream", coding, x.base.Path, err)
		default:
			x.p.logf("mcpspy: %s stream on %s: %v; forwarding the rest unrecorded%s", coding, x.base.Path, err, st.notRewritten())
		}
		return
	}
}

// recodeWriter compresses what is copied into it, flushed after each
// write.
type recodeWriter struct{ st *recoding }

func (w recodeWriter) Write(b []byte) (int, error) {
	w.st.write(b)
	return len(b), nil
}
