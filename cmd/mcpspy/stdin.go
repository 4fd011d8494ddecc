package main

import (
	"bufio"
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

// readStdin reads the JSONL export on in for cmd, whole.
func readStdin(cmd string, in io.Reader) (*store.Tape, error) {
	return readPiped(cmd, stdinLabel, in)
}

// readPiped reads the JSONL export in a pipe named name for cmd, whole.
// A HAR is not taken there: its bodies may be in files beside it, and a
// pipe has no beside.
func readPiped(cmd, name string, in io.Reader) (*store.Tape, error) {
	r := bufio.NewReader(in)
	if head, _ := r.Peek(512); store.LooksLikeZip(head) || store.LooksLikeHAR(head) {
		return nil, usageErrorf("%s: %s holds a HAR; save it to a FILE.har and %s that", cmd, name, cmd)
	}
	return store.ReadJSONL(r, name)
}

// loadRecording reads the recording at path whole for cmd, or for "-"
// the JSONL export on in.
func loadRecording(cmd, path string, in io.Reader) (*store.Tape, error) {
	if path == stdinName {
		return readStdin(cmd, in)
	}
	return store.Load(path)
}

// openRecording opens the recording at path for a model (show, inspect,
// export --filter), or for "-" the JSONL export on stdin.
func openRecording(cmd, path string, s streams) (*inspector.Model, inspector.Source, error) {
	if path != stdinName {
		return inspector.Open(path)
	}
	tape, err := readStdin(cmd, s.In)
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
