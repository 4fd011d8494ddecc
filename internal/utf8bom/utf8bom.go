// Package utf8bom passes over the UTF-8 byte order mark that some tools
// and Windows editors put before JSON text (a HAR saved by Fiddler, a
// config saved by Notepad), which encoding/json refuses as an invalid
// character. It never changes the text after the mark.
package utf8bom

import (
	"bufio"
	"bytes"
	"io"
)

// Mark is the UTF-8 byte order mark, U+FEFF.
var Mark = []byte{0xEF, 0xBB, 0xBF}

// Trim returns b without a leading Mark.
func Trim(b []byte) []byte { return bytes.TrimPrefix(b, Mark) }

// Reader returns r's text without a leading Mark. Past its first bytes it
// reads straight into the caller's buffer: the buffer it peeks with is
// smaller than any read of a whole file.
func Reader(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 16)
	if head, _ := br.Peek(len(Mark)); bytes.Equal(head, Mark) {
		br.Discard(len(Mark))
	}
	return br
}
