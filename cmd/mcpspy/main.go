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
	"os"
	"runtime"
	"strings"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/store"
)

// streams are the process's standard files, replaceable in tests.
type streams = cli.Streams

func main() {
	store.NoticeLockWaits("mcpspy", os.Stderr)
	cli.Main("mcpspy", run)
}

const usage = `mcpspy records and inspects MCP traffic.

Usage:
  mcpspy record [-o CASSETTE] [--session NAME] -- COMMAND [ARG...]
  mcpspy record [-o CASSETTE] [--session NAME] [--listen ADDR] --upstream URL
  mcpspy inspect [--follow] CASSETTE|-
  mcpspy show [--session ID] [--filter EXPR] [--body] [--http] [--lint] [--follow] CASSETTE|-
  mcpspy show --resend [--session ID] [--filter EXPR] [--follow] CASSETTE
  mcpspy show --tools [--session ID] CASSETTE
  mcpspy ls [--json] CASSETTE...
  mcpspy export [--session ID] [--filter EXPR | --salvage | --script [--timing recorded] | --har] [--redact NAME] [--redact-value REGEX] [-o FILE] CASSETTE
  mcpspy diff [--session ID [--session ID]] [--ignore NAME] [--progress last|steps|off] [--all] [--all-leaves] [--order] [--exit-code] A B
  mcpspy rerun [--session ID] [-o CASSETTE] [--exit-code] SOURCE... (-- COMMAND [ARG...] | --upstream URL)
  mcpspy lint [--session ID] [--skip RULE] [--min SEVERITY] [--strict] [--json] CASSETTE...
  mcpspy lint --rules
  mcpspy import -o CASSETTE [--redact NAME] [--redact-value REGEX] [--no-redact] FILE.jsonl|FILE.har|-
  mcpspy wrap [-o FILE] [--cassette CASSETTE] [--mcpspy PATH] [--unwrap] CONFIG

CASSETTE is a cassette (.db) that record writes. A command that only reads
one (inspect, show, ls, export, diff, rerun, lint) also reads a JSONL export
(.jsonl) or a HAR (.har, or the .zip Playwright's recordHar writes one into).
A file whose name says none of these (no extension, /dev/fd/63 of a shell's
<(mcpspy export x.db)) is read as what it holds; a named one as its name says,
and is refused, naming what it holds, when its first bytes say otherwise.
-o - is stdout where the output is text (export, wrap); the CASSETTE - of
a command that reads one (diff's A or B, rerun's SOURCE), and import's
FILE -, are stdin, read as a pipe is: a JSONL export or a HAR; a cassette
too when stdin is its file (mcpspy ls - < x.db), not a pipe.

Run "mcpspy help COMMAND" (or "mcpspy COMMAND -h") for a command's flags,
"mcpspy --version" for the version.
`

func run(ctx context.Context, args []string, s streams) error {
	if len(args) == 0 {
		fmt.Fprint(s.Err, usage)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "record":
		return salvageHint(runRecord(ctx, args[1:], s))
	case "inspect":
		return salvageHint(runInspect(ctx, args[1:], s))
	case "show":
		return salvageHint(runShow(ctx, args[1:], s))
	case "ls":
		return salvageHint(runLs(args[1:], s))
	case "export":
		return runExport(args[1:], s) // names --salvage itself, the flag being at hand
	case "diff":
		return salvageHint(runDiff(args[1:], s))
	case "rerun":
		return salvageHint(runRerun(ctx, args[1:], s))
	case "lint":
		return runLint(args[1:], s) // prints each cassette's error itself
	case "import":
		return salvageHint(runImport(args[1:], s))
	case "wrap":
		return runWrap(args[1:], s)
	case "help", "-h", "-help", "--help":
		return cli.Help(args, usage, s, func(args []string) error { return run(ctx, args, s) })
	case "version", "-version", "--version":
		// The version a bug report wants; the same one every recording keeps.
		_, err := fmt.Fprintln(s.Out, strings.Replace(version, "/", " ", 1), runtime.Version())
		return err
	}
	return cli.UnknownCommand(args, "record, inspect, show, ls, export, diff, rerun, lint, import or wrap",
		[]string{"record", "inspect", "show", "ls", "export", "diff", "rerun", "lint", "import", "wrap", "help", "version"})
}

// salvageHint says, after the error of a damaged cassette or export, how
// to get what is left of it: a user who met the error in ls or show would
// not know that export has a way round it.
func salvageHint(err error) error {
	if (errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrJSONL)) && !errors.Is(err, store.ErrUnsalvageable) {
		return fmt.Errorf("%w; mcpspy export --salvage -o FILE.jsonl CASSETTE exports what can still be read", err)
	}
	return err
}

func usageErrorf(format string, a ...any) error { return cli.Usagef(format, a...) }

func newFlags(name, synopsis string, s streams) *flag.FlagSet {
	return cli.NewFlags("mcpspy", name, synopsis, s)
}

func parseFlags(fs *flag.FlagSet, args []string) error { return cli.Parse(fs, args) }
