// Package chunkfeed hands the chunks a forwarding loop reads to a parser
// on another goroutine, and holds the loop until the parser has used each
// chunk up. A recorder forwards a chunk only once every message it
// completes has been recorded, so that seq keeps causal order, while the
// parser stays an ordinary pull parser (bufio, gzip, net/http's readers).
//
// It must never copy a chunk nor hold one after Put returns: the loop
// reuses its buffer.
package chunkfeed

import "io"

// Feed is one stream's chunks. Put and Close belong to the forwarding
// goroutine; Read, ReadByte and Discard to the parser's.
type Feed struct {
	chunks chan []byte
	used   chan struct{} // the parser has used up the last chunk
	stop   chan struct{} // closed by Discard: the parser wants no more
	cur    []byte
	owed   bool // a chunk was taken and its "used" is not yet signalled
}

// New returns an empty feed.
func New() *Feed {
	return &Feed{chunks: make(chan []byte), used: make(chan struct{}), stop: make(chan struct{})}
}

// Put gives the parser b and waits until it has used it up: it asked for
// more than it was given, or it has stopped. b may be reused once Put
// returns.
func (f *Feed) Put(b []byte) {
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

// Close ends the stream: the parser reads io.EOF once it has used what it
// has, so that a decompressor can tell a whole stream from a truncated
// one.
func (f *Feed) Close() { close(f.chunks) }

// Discard is the parser saying it is done, whatever is still to come;
// later Puts return at once. Call it once.
func (f *Feed) Discard() { close(f.stop) }

// next waits for the next chunk, first telling Put that the last one is
// used up.
func (f *Feed) next() bool {
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

// Read implements io.Reader.
func (f *Feed) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		if !f.next() {
			return 0, io.EOF
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// ReadByte implements io.ByteReader, so that decompressors read the feed
// directly instead of buffering ahead through bufio.
func (f *Feed) ReadByte() (byte, error) {
	for len(f.cur) == 0 {
		if !f.next() {
			return 0, io.EOF
		}
	}
	c := f.cur[0]
	f.cur = f.cur[1:]
	return c, nil
}
