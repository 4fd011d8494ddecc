package recorder

import (
	"errors"
	"io"
	"net/http"
	"time"

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
	feed := newChunkFeed()
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		defer feed.discard() // the relay never waits on a parser that stopped
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
	for {
		n, err := x.resp.Body.Read(buf)
		if n > 0 {
			feed.put(buf[:n])
			if _, werr := x.w.Write(buf[:n]); werr != nil || rc.Flush() != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	feed.close()
	<-parsed
}

// chunkFeed hands the chunks of a stream to a parser on another goroutine
// and lets the sender wait until the parser has used a chunk up: put
// returns once the parser asks for more than it was given (or has
// stopped). It implements io.ByteReader so that decompressors read it
// directly instead of buffering ahead through bufio.
type chunkFeed struct {
	chunks chan []byte
	used   chan struct{} // the parser has used up the last chunk
	stop   chan struct{} // closed by discard: the parser wants no more
	cur    []byte
	owed   bool // a chunk was taken and its "used" is not yet signalled
}

func newChunkFeed() *chunkFeed {
	return &chunkFeed{chunks: make(chan []byte), used: make(chan struct{}), stop: make(chan struct{})}
}

// put gives the parser b and waits until it has used it up. b may be
// reused once put returns.
func (f *chunkFeed) put(b []byte) {
	select {
	case f.chunks <- b:
	case <-f.stop:
		return
	}
	select {
	case <-f.used:
	case <-f.stop:
	}
}

// close ends the stream: the parser reads io.EOF once it has used what it
// has, so a decompressor can tell a whole stream from a truncated one.
func (f *chunkFeed) close() { close(f.chunks) }

// discard is the parser saying it is done, whatever is still to come.
func (f *chunkFeed) discard() { close(f.stop) }

// next waits for the next chunk, first telling put that the last one is
// used up.
func (f *chunkFeed) next() bool {
	if f.owed {
		f.owed = false
		f.used <- struct{}{}
	}
	b, ok := <-f.chunks
	if !ok {
		return false
	}
	f.cur, f.owed = b, true
	return true
}

func (f *chunkFeed) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		if !f.next() {
			return 0, io.EOF
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

func (f *chunkFeed) ReadByte() (byte, error) {
	for len(f.cur) == 0 {
		if !f.next() {
			return 0, io.EOF
		}
	}
	c := f.cur[0]
	f.cur = f.cur[1:]
	return c, nil
}
