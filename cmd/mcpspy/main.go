// Command mcpspy records MCP traffic between a client and a real server
// into a cassette, and shows cassettes in a terminal inspector.
//
// This package only parses flags and wires the parts together.
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

const usage = `mcpspy records and inspects MCP traffic.

Usage:
  mcpspy record [-o CASSETTE] [--session NAME] -- COMMAND [ARG...]
  mcpspy record [-o CASSETTE] [--session NAME] --listen ADDR --upstream URL
  mcpspy inspect [--follow] CASSETTE
  mcpspy ls CASSETTE
  mcpspy export [--session ID] [-o FILE] CASSETTE
  mcpspy import -o CASSETTE FILE.jsonl

Run "mcpspy COMMAND -h" for a command's flags.
`

func run(ctx context.Context, args []string, s streams) error {
	if len(args) == 0 {
		fmt.Fprint(s.err, usage)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "record":
		return runRecord(ctx, args[1:], s)
	case "inspect":
		return runInspect(ctx, args[1:], s)
	case "ls":
		return runLs(args[1:], s)
	case "export":
		return runExport(args[1:], s)
	case "import":
		return runImport(args[1:], s)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(s.out, usage)
		return nil
	}
	return usageErrorf("unknown command %q (want record, inspect, ls, export or import)", args[0])
}

// usageError is a mistake on the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}

// exitError carries an exit code chosen elsewhere (the server's), with
// nothing more to say.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpspy: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "mcpspy: %v\n", err)
	return 1
}

// newFlags makes a flag set that reports errors instead of exiting and
// prints its usage to the given stream.
func newFlags(name, synopsis string, s streams) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "Usage: mcpspy %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses and turns a flag error into a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErrorf("%s: %v", fs.Name(), err)
	}
	return nil
}
