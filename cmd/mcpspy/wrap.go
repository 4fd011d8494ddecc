package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/mcptape/mcptape/internal/utf8bom"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/jsonerr"
	"github.com/mcptape/mcptape/recorder"
)

const wrapSynopsis = "wrap [-o FILE] [--cassette CASSETTE] [--mcpspy PATH] [--unwrap] CONFIG"

// runWrap is mcpspy wrap: recorder.WrapHostConfig on a file, with the
// paths made absolute, since a host starts its servers from a directory
// and with a PATH of its own.
func runWrap(args []string, s streams) error {
	fs := newFlags("wrap", wrapSynopsis, s)
	out := fs.String("o", "", "write the configuration to `FILE` (atomically; it may be CONFIG itself) instead of stdout (- is stdout)")
	cassette := fs.String("cassette", "mcpspy.db", "the `CASSETTE` the servers record into, one session each, named after the server\n"+
		"(SERVER@PROJECT for one of a Claude Code project in ~/.claude.json)")
	self := fs.String("mcpspy", "", "the `PATH` of the mcpspy the host is to start, made absolute; a bare name is looked up on the\n"+
		"host's PATH (default: this one, by its absolute path)")
	unwrap := fs.Bool("unwrap", false, "undo an earlier wrap: every server mcpspy records starts without it again")
	if err := cli.ParseAll(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("wrap: want exactly one CONFIG (a host's mcp.json, claude_desktop_config.json, ~/.claude.json or VS Code's settings.json), got %d arguments", fs.NArg())
	}
	config := fs.Arg(0)
	*out = outFlag(*out)
	if err := checkWrapPath("--cassette", *cassette); err != nil {
		return err
	}
	// An empty --mcpspy is refused, not read as the default: the user
	// meant some path, and it did not come through (an unset variable).
	selfGiven := false
	fs.Visit(func(f *flag.Flag) { selfGiven = selfGiven || f.Name == "mcpspy" })
	if err := checkWrapPath("--mcpspy", *self); selfGiven && err != nil {
		return err
	}
	if *out != "" && cli.SamePath(*out, *cassette) {
		return usageErrorf("wrap: -o %s is also the --cassette", *out)
	}
	if err := checkCassetteOut("wrap", "--cassette", *cassette); err != nil {
		return err
	}
	o := recorder.WrapOptions{Unwrap: *unwrap, ServerAt: recordServerAt}
	var err error
	if o.Cassette, err = filepath.Abs(*cassette); err != nil {
		return fmt.Errorf("wrap: --cassette: %w", err)
	}
	if o.Mcpspy, err = mcpspyPath(*self, s.Err); err != nil {
		return err
	}
	data, err := os.ReadFile(config)
	if err != nil {
		return fmt.Errorf("wrap: %w", err)
	}
	// A config a Windows editor saved may start with a byte order mark,
	// which is no JSON: wrap what follows it, and keep it.
	bom := data[:len(data)-len(utf8bom.Trim(data))]
	data = data[len(bom):]
	text, notes, err := recorder.WrapHostConfig(data, o)
	// A JSONC error (a comment never closed) is located as
	// encoding/json's are, FILE:LINE:COL for an editor to jump to.
	var jsonc *recorder.ConfigSyntaxError
	if errors.As(err, &jsonc) {
		return fmt.Errorf("wrap: %s:%d:%d: not JSON: %s", config, jsonc.Line, jsonc.Col, jsonc.Msg)
	}
	if err != nil {
		return fmt.Errorf("wrap: %w", jsonerr.File(config, data, err))
	}
	text = slices.Concat(bom, text)
	if err := writeExport(*out, s.Out, func(w io.Writer) error {
		_, err := w.Write(text)
		return err
	}); err != nil {
		return fmt.Errorf("wrap: %w", err)
	}
	var cassettes []string // where the servers record, in the file's order
	for _, n := range notes {
		// The same server may be in two Claude Code projects: say whose.
		if n.Project != "" {
			fmt.Fprintf(s.Err, "mcpspy: wrap: %s (project %s): %s\n", n.Server, n.Project, n.Note)
		} else {
			fmt.Fprintf(s.Err, "mcpspy: wrap: %s: %s\n", n.Server, n.Note)
		}
		if n.RecordsInto != "" && !slices.Contains(cassettes, n.RecordsInto) {
			cassettes = append(cassettes, n.RecordsInto)
		}
	}
	if *out != "" && !*unwrap {
		restart := "restart the host; "
		if bytes.Equal(text, slices.Concat(bom, data)) {
			restart = "" // nothing was wrapped: the host runs as it will
		}
		for _, c := range cassettes {
			fmt.Fprintf(s.Err, "mcpspy: wrap: %swatch with: mcpspy inspect --follow %s\n", restart, c)
		}
	}
	return nil
}

// checkWrapPath refuses a path flag that wrap would write into every
// server's entry wrongly, breaking them all at the host's next start: an
// empty one (made absolute, it is the current directory) and one that
// starts with a "~" the shell did not expand (as after "--flag=").
func checkWrapPath(flag, path string) error {
	switch {
	case path == "":
		return usageErrorf("wrap: %s wants a path, got an empty one", flag)
	case path == "~" || strings.HasPrefix(path, "~/"):
		return usageErrorf("wrap: %s %s: the shell did not expand ~ (it does not after \"=\"); write %s=$HOME%s", flag, path, flag, strings.TrimPrefix(path, "~"))
	}
	return nil
}

// mcpspyPath is the program the host is to start: --mcpspy's value when
// given, made absolute if it is a path (the host starts servers from a
// directory of its own; a bare name stays, for the host's PATH), else
// this executable by its absolute path, unless it is a go run build that
// will be gone, when it is mcpspy from the host's PATH.
func mcpspyPath(given string, stderr io.Writer) (string, error) {
	if strings.ContainsAny(given, "/"+string(filepath.Separator)) {
		abs, err := filepath.Abs(given)
		if err != nil {
			return "", fmt.Errorf("wrap: --mcpspy: %w", err)
		}
		return abs, nil
	}
	if given != "" {
		return given, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("wrap: where is this mcpspy? %w; name it with --mcpspy PATH", err)
	}
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(stderr, "mcpspy: wrap: this mcpspy is a temporary go run build; the host will start \"mcpspy\" from its PATH (go install ./cmd/mcpspy, or --mcpspy PATH)\n")
		return "mcpspy", nil
	}
	return self, nil
}

// recordServerAt finds the server's command in mcpspy record's arguments
// as record itself does, "--" or not, for wrap to know a server it
// records already, and whether they set recorder.KeepArgsFlag.
func recordServerAt(args []string) (at int, keepArgs, ok bool) {
	o, err := parseRecord(args, streams{Out: io.Discard, Err: io.Discard})
	if err != nil || len(o.command) == 0 {
		return 0, false, false
	}
	return len(args) - len(o.command), o.unwrapKeepsArgs, true
}
