package recorder

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/mcptape/mcptape/internal/frame"
)

// readBody reads an HTTP body of a declared length into one exact-size
// buffer, so that a 64 MiB message costs 64 MiB once; io.ReadAll grows by
// doubling and may hold twice that. Bodies of unknown length (chunked)
// grow as io.ReadAll does. At most limit bytes are read.
//
// Past its first bodyProbe bytes, the buffer is only made once that much
// has come: a Content-Length alone, with no body behind it, must not cost
// the proxy the memory it names.
//
// beforeLong, if not nil, runs once for a body of frame.LongLine bytes or
// more, as soon as it is known to be one and before the rest is read: a
// recorder waits there for the store (waitBacklog).
func readBody(r io.Reader, length, limit int64, beforeLong func()) ([]byte, error) {
	if length < 0 || length > limit {
		return readGrowing(r, limit, beforeLong)
	}
	buf := make([]byte, min(length, bodyProbe))
	n, err := io.ReadFull(r, buf)
	if err != nil || length == int64(n) {
		return buf[:n], err // a short body is an error, as io.ReadAll's caller sees it
	}
	if length >= frame.LongLine && beforeLong != nil {
		beforeLong()
	}
	whole := make([]byte, length)
	copy(whole, buf)
	m, err := io.ReadFull(r, whole[n:])
	return whole[:n+m], err
}

// bodyProbe is how much of a body readBody reads before it makes room
// for all of it.
const bodyProbe = 1 << 20

// readGrowing reads r to its end, at most limit bytes, into a buffer that
// grows as it fills. With beforeLong (not nil), what passes
// frame.LongLine bytes runs it once, is read in pieces and copied once
// into an exact fit, and the pieces are collected: growing by append
// would hold the last two sizes at once and leave the garbage of all of
// them, nearly four times the body at the peak where this holds two.
func readGrowing(r io.Reader, limit int64, beforeLong func()) ([]byte, error) {
	short := limit
	if beforeLong != nil {
		short = min(limit, frame.LongLine)
	}
	b, err := io.ReadAll(io.LimitReader(r, short))
	if err != nil || int64(len(b)) < short || short == limit {
		return b, err
	}
	beforeLong()
	parts := [][]byte{b}
	total := len(b)
	for left := limit - short; left > 0 && err == nil; {
		piece := make([]byte, min(left, longBodyPiece))
		n := 0
		for n < len(piece) && err == nil {
			var k int
			k, err = r.Read(piece[n:])
			n += k
		}
		parts = append(parts, piece[:n])
		total += n
		left -= int64(n)
	}
	if err == io.EOF {
		err = nil
	}
	whole := make([]byte, 0, total)
	for i, p := range parts {
		whole = append(whole, p...)
		parts[i] = nil
	}
	runtime.GC() // the pieces, before the store's commit copies the body
	return whole, err
}

// longBodyPiece is the size of the pieces readGrowing reads a long body in.
const longBodyPiece = 1 << 20

// contentCoding is a body's Content-Encoding, lower case; "" when the body
// travels as it is.
func contentCoding(h http.Header) string {
	c := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	if c == "identity" {
		return ""
	}
	return c
}

// newDecoder undoes a content coding: gzip and deflate (the standard
// library's), br and zstd (what CDNs answer clients that accept them:
// browsers, curl --compressed, Python's httpx with brotli or zstandard
// installed). Others are forwarded but cannot be recorded as messages.
// Close releases the decoder; it does not close r.
func newDecoder(coding string, r io.Reader) (io.ReadCloser, error) {
	switch coding {
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "deflate": // RFC 9110: the zlib format
		return zlib.NewReader(r)
	case "br":
		return io.NopCloser(brotli.NewReader(r)), nil
	case "zstd":
		// One goroutine, decoding in Read: a proxy decodes many streams
		// at once, and each must not start its own workers. The window
		// is bounded as RFC 9659 asks of HTTP (8 MiB).
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20))
		if err != nil {
			return nil, err
		}
		return zr.IOReadCloser(), nil
	}
	return nil, errCoding(coding)
}

// canRecode says whether mcpspy can both undo and redo a content coding:
// those newDecoder and newEncoder know.
func canRecode(coding string) bool {
	switch coding {
	case "gzip", "x-gzip", "deflate", "br", "zstd":
		return true
	}
	return false
}

// encoder compresses a stream that is flushed as it goes.
type encoder interface {
	io.WriteCloser
	Flush() error
}

// newEncoder redoes a content coding newDecoder undid, for a stream the
// proxy must change (a legacy endpoint event) on its way to a client that
// asked for that coding. The fastest level: the stream is live and
// flushed after every event, so a stronger one gains little.
func newEncoder(coding string, w io.Writer) (encoder, error) {
	switch coding {
	case "gzip", "x-gzip":
		return gzip.NewWriterLevel(w, gzip.BestSpeed)
	case "deflate":
		return zlib.NewWriterLevel(w, zlib.BestSpeed)
	case "br":
		return brotli.NewWriterLevel(w, brotli.BestSpeed), nil
	case "zstd":
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
	}
	return nil, errCoding(coding)
}

func errCoding(coding string) error { return fmt.Errorf("content coding %q is not supported", coding) }

// decodedBody is what the cassette records of a body: the message. The
// peer gets the bytes as they came; when they were compressed, the
// recorded frame is the decompressed JSON, and the stored Content-Encoding
// header tells how it travelled. A body that does not decompress is
// recorded as it is.
//
// beforeLong is as for readBody: a few compressed KiB may make a message
// of 64 MiB, as long as any other frame and as much for the store to hold.
func decodedBody(h http.Header, body []byte, beforeLong func()) []byte {
	coding := contentCoding(h)
	if coding == "" {
		return body
	}
	zr, err := newDecoder(coding, bytes.NewReader(body))
	if err != nil {
		return body
	}
	defer zr.Close()
	plain, err := readGrowing(zr, maxBody, beforeLong)
	if err != nil {
		return body
	}
	return plain
}
