package recorder

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/chunkfeed"
	"github.com/mcptape/mcptape/internal/sse"
)

// relayEncodedSSE forwards a compressed event stream (an upstream with
// gzip middleware answers so when the client accepts it) chunk by chunk
// as it arrives, flushing after each, and records the events of a
// decompressed copy. A chunk is forwarded only after every event it
// completes has been recorded, so seq keeps causal order as on a plain
// stream. A stream whose coding mcpspy cannot read (br, zstd) or that
// does not decompress is forwarded whole and recorded from that point no
// further, with a warning.
//
// A legacy endpoint event inside a compressed stream is not rewritten.
func (x *exchange) relayEncodedSSE(rc *http.ResponseController, coding string) {
	feed := chunkfeed.New()
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		defer feed.Discard() // the relay never waits on a parser that stopped
		zr, err := newDecoder(coding, feed)
		if err != nil {
			x.p.logf("mcpspy: %s stream on %s: %v; forwarding it unrecorded", coding, x.base.Path, err)
			return
		}
		rec := x.newSSERecorder()
		defer rec.finish()
		rd := sse.NewReader(zr, 0)
		for {
			ev, err := rd.Next()
			if len(ev.Raw) > 0 {
				rec.event(ev, time.Now())
			}
			if err != nil {
				// EOF ends the stream; a truncated one (the upstream or
				// the client went away) is no news either.
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					x.p.logf("mcpspy: %s stream on %s: %v; forwarding the rest unrecorded", coding, x.base.Path, err)
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	var err error
	for {
		var n int
		n, err = x.resp.Body.Read(buf)
		if n > 0 {
			feed.Put(buf[:n])
			if _, werr := x.w.Write(buf[:n]); werr != nil || rc.Flush() != nil {
				err = nil // the client left: nothing to tell it
				break
			}
		}
		if err != nil {
			break
		}
	}
	feed.Close()
	<-parsed
	x.abortIfCut(err)
}
