package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/atomicfile"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
)

const rerunSynopsis = `rerun [--session ID] [-o CASSETTE] [--timeout D] [--header 'NAME: VALUE'] [--all] [--exit-code] SOURCE -- COMMAND [ARG...]
       mcpspy rerun [flags] SOURCE --upstream URL`

// runRerun sends the client side of a recorded session to a server again
// and compares what it answers now with what it answered then.
func runRerun(ctx context.Context, args []string, s streams) error {
	fs := newFlags("rerun", rerunSynopsis, s)
	session := fs.String("session", "", "the recorded session to rerun (id or name); needed when SOURCE holds several")
	out := fs.String("o", "", "also record the rerun into this cassette (created if missing, added to if not)")
	upstream := fs.String("upstream", "", "rerun against the Streamable HTTP server at this URL instead of a command\n"+
		"(a path ending in /sse: a legacy HTTP+SSE server; ws:// or wss://: WebSocket)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for each answer (and server request) the recording got")
	var headers multiFlag
	fs.Var(&headers, "header", "add this header to every HTTP request (repeatable): the credentials a recording keeps redacted")
	all := fs.Bool("all", false, "print the requests answered the same too")
	exitCode := fs.Bool("exit-code", false, "exit 1 when the server now answers differently, or not at all")
	cmdAt := slices.Index(args, "--")
	flagArgs, command := args, []string(nil)
	if cmdAt >= 0 {
		flagArgs, command = args[:cmdAt], args[cmdAt+1:]
	}
	// Flags may come after SOURCE too (SOURCE --upstream URL reads best).
	positional, err := cli.ParseInterleaved(fs, flagArgs)
	if err != nil {
		return err
	}
	switch {
	case len(positional) != 1:
		return usageErrorf("rerun: want one SOURCE cassette (before --), got %d: %q", len(positional), positional)
	case *upstream != "" && cmdAt >= 0:
		return usageErrorf("rerun: give either --upstream URL or -- COMMAND, not both")
	case *upstream == "" && len(command) == 0:
		return usageErrorf("rerun: no server: give -- COMMAND [ARG...] (stdio) or --upstream URL (Streamable HTTP)")
	case *out != "" && cli.SamePath(*out, positional[0]):
		return usageErrorf("rerun: -o %s is the SOURCE; name another cassette", *out)
	}
	opts := rerun.Options{Command: command, Timeout: *timeout, Stderr: s.Err, Header: http.Header{}}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return usageErrorf("rerun: --header %q: want NAME: VALUE", h)
		}
		opts.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	target := recorder.RedactCommandLine(command)
	if *upstream != "" {
		u, err := url.Parse(*upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return usageErrorf("rerun: --upstream %q: want an http(s):// or ws(s):// URL", *upstream)
		}
		opts.URL, target = u, u.Redacted()
	} else if len(headers) > 0 {
		return usageErrorf("rerun: --header is for --upstream URL, not a stdio server")
	}

	tape, err := store.Load(positional[0])
	if err != nil {
		return err
	}
	recorded, err := pickSession("rerun", tape, positional[0], *session)
	if err != nil {
		return err
	}
	res, err := rerun.Run(ctx, recorded, opts)
	if err != nil {
		return fmt.Errorf("rerun: %w", err)
	}
	for _, u := range res.Unanswered {
		fmt.Fprintf(s.Err, "mcpspy: rerun: %s\n", u)
	}
	if *out != "" {
		res.Session.Info.Name = "rerun of " + positional[0] + " " + recorded.Info.ID
		if err := addToCassette(*out, &store.Tape{Sessions: []store.TapeSession{res.Session}}); err != nil {
			return err
		}
	}
	differ := printComparison(s.Out, positional[0]+" "+recorded.Info.ID, "rerun against "+target, recorded, &res.Session, *all)
	if *exitCode && (differ || len(res.Unanswered) > 0) {
		return &cli.ExitError{Code: 1}
	}
	return nil
}

// addToCassette writes tape's sessions into the cassette at path, a copy
// of it renamed into place, as import does.
func addToCassette(path string, tape *store.Tape) error {
	return atomicfile.Write(path, 0o600, func(tmp *os.File) error {
		if err := copyExisting(path, tmp); err != nil {
			return err
		}
		return store.Import(tmp.Name(), tape)
	})
}
