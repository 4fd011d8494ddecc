package store

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/utf8bom"
)

// Kind is how a recording is read: where it lies (a bbolt cassette), or
// whole (a JSONL export, a HAR).
type Kind int

const (
	// KindDB is a bbolt cassette, opened where it lies. A file that is
	// nothing this package reads is one too: the open says what is wrong.
	KindDB Kind = iota
	// KindJSONL is a JSONL export, read whole.
	KindJSONL
	// KindHAR is an HTTP Archive, or the zip recordHar writes one into.
	KindHAR
	// KindStream is a pipe or a socket (/dev/fd/63 of a shell's <(…),
	// /dev/stdin fed by a pipe): read once, so what it holds is decided
	// as it is read. A device (/dev/null, a terminal) is no recording,
	// and is refused as not a file, as before.
	KindStream
)

// sniffLen is how much of a file KindOf reads to decide: enough for the
// meta page's magic and a JSON document's first member past white space.
const sniffLen = 512

// KindOf decides how the recording at path is read, the one place every
// reading command asks. A telling name decides: .db (and a script's
// .yaml, .yml, .json, which the open refuses with a word on scripts),
// .jsonl, .har and .zip. Any other name is decided by what the file
// holds (sniff), so that a cassette or an export saved without its
// extension reads as it did. A pipe or a socket, whatever its name, is
// KindStream. A name that does not open is KindDB, whose open gives the
// one-line "does not exist".
func KindOf(path string) Kind {
	k, _ := kindOf(path)
	return k
}

// Recognized says whether what KindOf decides of path comes from the file
// itself: a pipe, or a file that holds a recording. A name that is
// neither (x.txt of notes, a missing file) is not.
func Recognized(path string) bool {
	_, ok := kindOf(path)
	return ok
}

// kindOf is KindOf, and whether the file's content or type decided it.
func kindOf(path string) (Kind, bool) {
	st, err := os.Stat(path)
	if err == nil && st.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) != 0 {
		return KindStream, true
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return KindJSONL, false
	case ".har", ".zip":
		return KindHAR, false
	case ".db", ".yaml", ".yml", ".json":
		return KindDB, false
	}
	if err != nil || st.IsDir() {
		return KindDB, false
	}
	f, err := os.Open(path)
	if err != nil {
		return KindDB, false
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, _ := f.ReadAt(head, 0)
	return sniff(head[:n])
}

// sniff decides a recording's kind by its first bytes: bbolt's magic, a
// zip archive's, a JSON document whose first member is "log" (a HAR), or
// other JSON text (an export's lines begin {"session"). Anything else is
// left to the bbolt open to refuse, and not recognized.
func sniff(head []byte) (Kind, bool) {
	switch {
	case looksLikeBbolt(head):
		return KindDB, true
	case LooksLikeZip(head), LooksLikeHAR(head):
		return KindHAR, true
	case bytes.HasPrefix(jsonStart(head), []byte("{")):
		return KindJSONL, true
	}
	return KindDB, false
}

// misnamed is the error, wrapping sentinel, for a file whose name says it
// is named (a .db, a .jsonl) while its first bytes say it is another kind:
// an export saved as x.db, a cassette as x.jsonl. The reader's own error
// ("not a bbolt database", "invalid character '\x00'") would leave the
// user guessing, or send them to --salvage, which cannot help. Nil when
// the bytes agree with the name or say nothing.
func misnamed(path string, named Kind, sentinel error) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	got, ok := sniff(head)
	if !ok || got == named {
		return nil
	}
	holds, rename := "a JSONL export (it starts with {)", ".jsonl"
	switch {
	case looksLikeBbolt(head):
		holds, rename = "a bbolt cassette (it starts with a bbolt meta page)", ".db"
	case LooksLikeZip(head):
		holds, rename = "a zip archive (a HAR in one, as Playwright saves it)", ".zip"
	case LooksLikeHAR(head):
		holds, rename = `a HAR (it starts with {"log")`, ".har"
	}
	was := map[Kind]string{KindDB: "a bbolt cassette", KindJSONL: "a JSONL export"}[named]
	return fmt.Errorf("%s: %w: it looks like %s, not %s as its name says; name it %s to read it as one",
		path, sentinel, holds, was, rename)
}

// jsonStart is head past a UTF-8 byte order mark and white space.
func jsonStart(head []byte) []byte {
	t := utf8bom.Trim(head)
	return t[jsonrpc.SkipWS(t, 0):]
}

// LooksLikeHAR says whether a file's first bytes are a JSON document
// whose first member is "log", as a HAR's is (a JSONL export's lines
// begin with "session").
func LooksLikeHAR(head []byte) bool {
	t := jsonStart(head)
	if !bytes.HasPrefix(t, []byte("{")) {
		return false
	}
	return bytes.HasPrefix(t[jsonrpc.SkipWS(t, 1):], []byte(`"log"`))
}
