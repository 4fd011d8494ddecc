package recorder

import "io"

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
