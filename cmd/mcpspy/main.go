// Command mcpspy records MCP traffic between a client and a real server
// into a cassette, and shows cassettes in a terminal inspector.
//
// This package only parses flags and wires the parts together.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/suggest"
)

// streams are the process's standard files, replaceable in tests.
type streams = cli.Streams

func main() { cli.Main("mcpspy", run) }

const usage = `mcpspy records and inspects MCP traffic.

Usage:
  mcpspy record [-o CASSETTE] [--session NAME] -- COMMAND [ARG...]
  mcpspy record [-o CASSETTE] [--session NAME] [--listen ADDR] --upstream URL
  mcpspy inspect [--follow] CASSETTE
  mcpspy show [--session ID] [--filter EXPR] [--body] [--http] [--lint] [--follow] CASSETTE
  mcpspy show --resend [--session ID] [--filter EXPR] [--follow] CASSETTE
  mcpspy show --tools [--session ID] CASSETTE
  mcpspy ls [--json] CASSETTE
  mcpspy export [--session ID] [--filter EXPR | --salvage | --script [--timing recorded] | --har] [--redact NAME] [--redact-value REGEX] [-o FILE] CASSETTE
  mcpspy diff [--session ID [--session ID]] [--ignore NAME] [--all] [--exit-code] A B
  mcpspy rerun [--session ID] [-o CASSETTE] [--exit-code] SOURCE... (-- COMMAND [ARG...] | --upstream URL)
  mcpspy lint [--session ID] [--skip RULE] [--min SEVERITY] [--strict] [--json] CASSETTE...
  mcpspy lint --rules
  mcpspy import -o CASSETTE [--redact NAME] [--redact-value REGEX] [--no-redact] FILE.jsonl|FILE.har
  mcpspy wrap [-o FILE] [--cassette CASSETTE] [--mcpspy PATH] [--unwrap] CONFIG

Run "mcpspy help COMMAND" (or "mcpspy COMMAND -h") for a command's flags.
`

func run(ctx context.Context, args []string, s streams) error {
	if len(args) == 0 {
		fmt.Fprint(s.Err, usage)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "record":
		return runRecord(ctx, args[1:], s)
	case "inspect":
		return runInspect(ctx, args[1:], s)
	case "show":
		return runShow(ctx, args[1:], s)
	case "ls":
		return runLs(args[1:], s)
	case "export":
		return runExport(args[1:], s)
	case "diff":
		return runDiff(args[1:], s)
	case "rerun":
		return runRerun(ctx, args[1:], s)
	case "lint":
		return runLint(args[1:], s)
	case "import":
		return runImport(args[1:], s)
	case "wrap":
		return runWrap(args[1:], s)
	case "help", "-h", "-help", "--help":
		return cli.Help(args, usage, s, func(args []string) error { return run(ctx, args, s) })
	}
	return usageErrorf("unknown command %q (want record, inspect, show, ls, export, diff, rerun, lint, import or wrap)%s", args[0],
		suggest.DidYouMean(args[0], []string{"record", "inspect", "show", "ls", "export", "diff", "rerun", "lint", "import", "wrap", "help"}, "%s"))
}

func usageErrorf(format string, a ...any) error { return cli.Usagef(format, a...) }

func newFlags(name, synopsis string, s streams) *flag.FlagSet {
	return cli.NewFlags("mcpspy", name, synopsis, s)
}

func parseFlags(fs *flag.FlagSet, args []string) error { return cli.Parse(fs, args) }
