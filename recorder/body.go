package recorder

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
)

// readBody reads an HTTP body of a declared length into one exact-size
// buffer, so that a 64 MiB message costs 64 MiB once; io.ReadAll grows by
// doubling and may hold twice that. Bodies of unknown length (chunked)
// fall back to io.ReadAll. At most limit bytes are read.
func readBody(r io.Reader, length, limit int64) ([]byte, error) {
	if length < 0 || length > limit {
		return io.ReadAll(io.LimitReader(r, limit))
	}
	buf := make([]byte, length)
	n, err := io.ReadFull(r, buf)
	return buf[:n], err // a short body is an error, as io.ReadAll's caller sees it
}

// decodedBody is what the cassette records of a response body: the message.
// The client gets the bytes as they came; when the upstream compressed them
// (it may, if the client asked), the recorded frame is the decompressed
// JSON, and the stored Content-Encoding header tells how it travelled. A
// body that does not decompress is recorded as it is.
func decodedBody(h http.Header, body []byte) []byte {
	if !strings.EqualFold(strings.TrimSpace(h.Get("Content-Encoding")), "gzip") {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	plain, err := io.ReadAll(io.LimitReader(zr, maxBody))
	if err != nil {
		return body
	}
	return plain
}
