package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
)

// Stream is the recording a pipe held, read whole: a JSONL export's
// tape, or a HAR's MCP traffic. Exactly one is set.
type Stream struct {
	Tape *Tape
	HAR  *HARImport
}

// ReadStream reads the recording r holds (stdin, a shell's <(…), any
// pipe), named name in errors, whole: a JSONL export, or a HAR as LoadHAR
// reads one. What it holds is decided by its first bytes, as a read once
// cannot look again. It refuses what cannot be read from a pipe: a zip
// archive and a bbolt cassette, which both need to seek. Every reading
// command reads "-" and a named pipe through it, so that the two accept
// and refuse the same.
func ReadStream(r io.Reader, name string) (*Tape, error) {
	s, err := ImportStream(r, name, HARImportOptions{})
	if err != nil {
		return nil, err
	}
	if s.HAR != nil {
		return tapeOfHAR(s.HAR), nil
	}
	return s.Tape, nil
}

// ImportStream is ReadStream for mcpspy import, which records a HAR's
// sessions afresh with opts' redaction, so it keeps a HAR's import as it
// is. opts.Files is not used: a pipe has no directory beside it, and a
// HAR that keeps a body in a file of its own is refused, naming the
// entry and the file.
func ImportStream(r io.Reader, name string, opts HARImportOptions) (*Stream, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(sniffLen)
	if err := unseekable(head, name); err != nil {
		return nil, err
	}
	switch {
	case LooksLikeHAR(head):
		opts.Files = pipeDir{}
		got, err := ImportHAR(br, name, opts)
		if err != nil {
			return nil, err
		}
		return &Stream{HAR: got}, nil
	case len(head) > 0 && !bytes.HasPrefix(jsonStart(head), []byte("{")):
		return nil, fmt.Errorf("%s: %w (not a JSONL export or a HAR, and a bbolt cassette cannot be read from a pipe: name the .db itself)", name, ErrNotCassette)
	}
	tape, err := ReadJSONL(br, name)
	if err != nil {
		return nil, err
	}
	return &Stream{Tape: tape}, nil
}

// unseekable refuses what a pipe named name holds, by its first bytes
// head, when it can only be read from a file it can seek in: a zip
// archive, a bbolt cassette.
func unseekable(head []byte, name string) error {
	switch {
	case LooksLikeZip(head):
		return fmt.Errorf("%s: a zip archive (a HAR in one) cannot be read from a pipe, which cannot seek: save it to a FILE.zip and read that", name)
	case looksLikeBbolt(head):
		return fmt.Errorf("%s: %w: a bbolt cassette cannot be read from a pipe, which cannot seek: name the .db itself", name, ErrNotCassette)
	}
	return nil
}

// looksLikeBbolt says whether a file's first bytes are a bbolt file's:
// its first meta page's magic, in either byte order.
func looksLikeBbolt(head []byte) bool {
	return len(head) >= 20 && (binary.LittleEndian.Uint32(head[16:]) == bboltMagic || binary.BigEndian.Uint32(head[16:]) == bboltMagic)
}

// pipeDir is the Files of a HAR read from a pipe. A pipe has no directory
// beside it, so a body kept in a file of its own cannot be reached; harFile
// says so in those words rather than "file does not exist", which would
// send the user looking for a file that may well be there.
type pipeDir struct{}

func (pipeDir) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
