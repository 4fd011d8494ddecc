package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/inspector"
	"github.com/mcptape/mcptape/store"
)

// stdinName is the CASSETTE (or import's FILE) that means stdin, as for
// tar, curl and tshark -r -: mcpspy export --filter … a.db | mcpspy show -.
const stdinName = "-"

// stdinLabel is what a command names stdin in what it says.
const stdinLabel = "stdin"

// label is how a command names the recording at path in what it says.
func label(path string) string {
	if path == stdinName {
		return stdinLabel
	}
	return path
}

// readStdin reads the recording on in (a JSONL export or a HAR) whole,
// through the store's one reader of pipes, so that "-" takes and refuses
// what a named pipe (<(…)) does. A cassette on stdin redirected from its
// file (mcpspy ls - < x.db) is read from that file, which, unlike a pipe,
// can seek.
func readStdin(in io.Reader) (*store.Tape, error) {
	if path, ok := stdinCassette(in); ok {
		tape, err := store.Load(path)
		return tape, stdinNamed(err, path)
	}
	return store.ReadStream(in, stdinLabel)
}

// stdinCassette is a name stdin can be opened by again when it is a
// regular file that holds a bbolt cassette: bbolt reads a file by its
// name and seeks in it, which a pipe does not allow, but a file
// redirected to stdin does, through /dev/fd (on Linux a link to the file
// itself). Anything else on stdin is read as a pipe is.
func stdinCassette(in io.Reader) (string, bool) {
	f, ok := in.(*os.File)
	if !ok {
		return "", false
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	path := "/dev/fd/" + strconv.Itoa(int(f.Fd()))
	return path, store.Recognized(path) && store.KindOf(path) == store.KindDB
}

// stdinNamed is err, from reading the file on stdin by the name path,
// told with "stdin" in its place: the name the user gave.
func stdinNamed(err error, path string) error {
	if err == nil || !strings.Contains(err.Error(), path) {
		return err
	}
	return &renamedErr{err: err, from: path, to: stdinLabel}
}

// renamedErr is an error told with one name in place of another;
// errors.Is and As see the original.
type renamedErr struct {
	err      error
	from, to string
}

func (e *renamedErr) Error() string { return strings.ReplaceAll(e.err.Error(), e.from, e.to) }
func (e *renamedErr) Unwrap() error { return e.err }

// loadRecording reads the recording at path whole, or for "-" the one on
// in.
func loadRecording(path string, in io.Reader) (*store.Tape, error) {
	if path == stdinName {
		return readStdin(in)
	}
	return store.Load(path)
}

// openRecording opens the recording at path for a model (show, inspect,
// export --filter), or for "-" the one on stdin.
func openRecording(path string, s streams) (*inspector.Model, inspector.Source, error) {
	if path != stdinName {
		return inspector.Open(path)
	}
	tape, err := readStdin(s.In)
	if err != nil {
		return nil, nil, err
	}
	return inspector.OpenTape(stdinLabel, tape)
}

// oneStdin refuses "-" named more than once: stdin is read once.
func oneStdin(cmd string, paths []string) error {
	n := 0
	for _, p := range paths {
		if p == stdinName {
			n++
		}
	}
	if n > 1 {
		return usageErrorf("%s: - (stdin) given %d times; stdin holds one recording, so name a file for the others", cmd, n)
	}
	return nil
}
