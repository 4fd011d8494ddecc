package main

import (
	"io"

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
// what a named pipe (<(…)) does.
func readStdin(in io.Reader) (*store.Tape, error) {
	return store.ReadStream(in, stdinLabel)
}

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
