// Command mcpmock is a deterministic fake MCP server: it replays cassettes
// recorded by mcpspy, or serves hand-written scripts, over stdio,
// Streamable HTTP, legacy HTTP+SSE or WebSocket.
//
// This package only parses flags and wires the parts together; the server
// is package replay.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// streams are the process's standard files, replaceable in tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], streams{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

const usage = `mcpmock is a fake MCP server that replays cassettes and serves scripts.

Usage:
  mcpmock serve [--http ADDR | --ws ADDR] [--match MODE] [--report FILE] [--strict]
                [--timing recorded|none] SOURCE...
  mcpmock check SOURCE...

SOURCE is a cassette (.db), a JSONL export (.jsonl) or a script (.yaml, .yml,
.json). Several sources layer: the first that answers a request wins.

Run "mcpmock COMMAND -h" for a command's flags.
`

func run(ctx context.Context, args []string, s streams) error {
	if len(args) == 0 {
		fmt.Fprint(s.err, usage)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], s)
	case "check":
		return runCheck(args[1:], s)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(s.out, usage)
		return nil
	}
	return usageErrorf("unknown command %q (want serve or check)", args[0])
}

// usageError is a mistake on the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpmock: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "mcpmock: %v\n", err)
	return 1
}

// newFlags makes a flag set that reports errors instead of exiting.
func newFlags(name, synopsis string, s streams) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "Usage: mcpmock %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterleaved parses flags wherever they appear among the
// positional arguments (mcpmock serve a.db --strict b.yaml), and returns
// the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErrorf("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
