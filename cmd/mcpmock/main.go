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
	"os"
	"runtime"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/store"
)

// streams are the process's standard files, replaceable in tests.
type streams = cli.Streams

func main() {
	store.NoticeLockWaits("mcpmock", os.Stderr)
	cli.Main("mcpmock", run)
}

// version is mcpmock's, which --version prints; it moves with mcpspy's,
// from the same module.
const version = "0.1"

const usage = `mcpmock is a fake MCP server that replays cassettes and serves scripts.

Usage:
  mcpmock serve [--http ADDR | --ws ADDR] [--watch] [--exit-with-parent] [--match MODE] [--report FILE] [--strict]
                [--journal FILE] [--timing recorded|none] [--session NAME]... [--ignore NAME]...
                [--call-timeout D] [--session-idle D] [--http-sessions auto|on|off] SOURCE...
  mcpmock serve [flags] [--record-new CASSETTE] [--redact NAME] [--redact-value REGEX]
                [SOURCE...] -- COMMAND [ARG...]
  mcpmock serve [flags] [--record-new CASSETTE] [--redact NAME] [--redact-value REGEX]
                [--header 'NAME: VALUE'] --upstream URL [SOURCE...]
  mcpmock check SOURCE...

SOURCE is a cassette (.db), a JSONL export (.jsonl), a HAR (.har, or the
.zip Playwright's recordHar writes one into) or a script (.yaml, .yml,
.json). Several sources layer: the first that answers a request wins.

With -- COMMAND (a stdio server) or --upstream URL (Streamable HTTP; legacy
HTTP+SSE for a URL ending in /sse, or a server that refuses the POST of
initialize and opens an event stream on GET; WebSocket for ws:// and
wss://), a request no SOURCE answers goes to that real server, and the
session with it is added to --record-new (default: the first SOURCE, if a
.db), so the next replay answers it from the cassette. A --record-new (or
first SOURCE) that does not exist yet is created, and the server answers
everything: record once, replay after.

Run "mcpmock help COMMAND" (or "mcpmock COMMAND -h") for a command's flags,
"mcpmock --version" for the version.
`

func run(ctx context.Context, args []string, s streams) error {
	if len(args) == 0 {
		fmt.Fprint(s.Err, usage)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "serve":
		return salvageHint(runServe(ctx, args[1:], s))
	case "check":
		return salvageHint(runCheck(args[1:], s))
	case "help", "-h", "-help", "--help":
		return cli.Help(args, usage, s, func(args []string) error { return run(ctx, args, s) })
	case "version", "-version", "--version":
		_, err := fmt.Fprintln(s.Out, "mcpmock", version, runtime.Version())
		return err
	}
	return cli.UnknownCommand(args, "serve or check", []string{"serve", "check", "help", "version"})
}

// salvageHint says, after the error of a damaged cassette or export, how to get
// what is left of it into a file mcpmock can serve.
func salvageHint(err error) error {
	if (errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrJSONL)) && !errors.Is(err, store.ErrUnsalvageable) {
		return fmt.Errorf("%w; mcpspy export --salvage -o FILE.jsonl CASSETTE exports what can still be read", err)
	}
	return err
}

func usageErrorf(format string, a ...any) error { return cli.Usagef(format, a...) }

func newFlags(name, synopsis string, s streams) *flag.FlagSet {
	return cli.NewFlags("mcpmock", name, synopsis, s)
}
