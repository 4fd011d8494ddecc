package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay/fallback"
)

// fallbackOptions are serve's flags for a real server behind the
// sources: "-- COMMAND [ARG...]" or --upstream URL, and --record-new.
type fallbackOptions struct {
	command   []string // after "--"; nil without one
	dashes    bool     // "--" was given, even with nothing after it
	upstream  string
	recordNew string
	// fresh: recordNew does not exist yet (go-vcr's "record once"): it is
	// created, and not loaded when it is also a SOURCE.
	fresh bool
	// alone: no SOURCE but a fresh recordNew, so the server answers every
	// request.
	alone   bool
	headers multiFlag
	header  http.Header // from headers, once checked
	redact  multiFlag
	// redactValue are the --redact-value patterns, values what they
	// compile to (nil when there are none).
	redactValue multiFlag
	values      *recorder.ValuePatterns
	url         *url.URL
}

func (f *fallbackOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&f.upstream, "upstream", "", "answer what no SOURCE answers from the Streamable HTTP server at `URL` (a legacy HTTP+SSE one\n"+
		"when its path ends in /sse, or when it refuses the POST of initialize and opens an event stream on GET; ws:// or wss://:\n"+
		"a WebSocket one), and record it\n"+
		"(or give a stdio server as -- COMMAND [ARG...] after the sources)")
	fs.StringVar(&f.recordNew, "record-new", "", "add the sessions with the fallback server to `CASSETTE` (a .db)\n"+
		"(default: the first SOURCE when it is a .db cassette; else they are not recorded)")
	fs.Var(&f.redact, "redact", "store as \"[redacted]\" the value of every message member, URL query parameter and server\n"+
		"command-line flag named `NAME`\n"+
		"in what the fallback server's sessions add to the cassette (repeatable; credentials always are)")
	fs.Var(&f.redactValue, "redact-value", "store as \"[redacted]\", in what the fallback server's sessions add to the cassette, every message\n"+
		"member whose string value, or an array element of it, the Go regular expression `REGEX` matches, and every URL\n"+
		"query parameter value, path segment and server command-line argument it matches: secrets found by what they look\n"+
		"like (sk-[A-Za-z0-9]{20,}), as mcpspy record --redact-value; repeatable. Replay matches a redacted value with any value")
	fs.Var(&f.headers, "header", "with --upstream: add header `'NAME: VALUE'` to every request to it (repeatable):\n"+
		"credentials, which are not recorded")
}

// splitCommand takes "-- COMMAND [ARG...]" off the end of serve's
// arguments (as mcpspy record and rerun read it).
func splitCommand(args []string) (rest, command []string) {
	at := slices.Index(args, "--")
	if at < 0 {
		return args, nil
	}
	return args[:at], append([]string{}, args[at+1:]...)
}

// check validates the flags once the sources are known, and settles
// where new sessions go.
func (f *fallbackOptions) check(o *serveOptions) error {
	f.dashes = f.command != nil
	switch {
	case f.dashes && len(f.command) == 0:
		return usageErrorf("serve: nothing after --: give the fallback server's COMMAND [ARG...]")
	case f.dashes && f.upstream != "":
		return usageErrorf("serve: give either --upstream URL or -- COMMAND, not both")
	case !f.enabled() && len(f.redact) > 0:
		return usageErrorf("serve: --redact is for what a fallback server adds: add -- COMMAND [ARG...] or --upstream URL")
	case !f.enabled() && len(f.redactValue) > 0:
		return usageErrorf("serve: --redact-value is for what a fallback server adds: add -- COMMAND [ARG...] or --upstream URL")
	case !f.enabled() && f.recordNew != "":
		return usageErrorf("serve: --record-new is for a fallback server: add -- COMMAND [ARG...] or --upstream URL")
	}
	if slices.Contains(f.redact, "") {
		return usageErrorf("serve: --redact wants a member or parameter name, got an empty one")
	}
	switch {
	case len(f.headers) > 0 && f.dashes:
		return usageErrorf("serve: --header is for --upstream URL, not a stdio server")
	case len(f.headers) > 0 && f.upstream == "":
		return usageErrorf("serve: --header is for a fallback server's requests: add --upstream URL")
	}
	header, err := cli.Headers("serve", f.headers)
	if err != nil {
		return err
	}
	f.header = header
	if f.values, err = recorder.NewValuePatterns(f.redactValue); err != nil {
		return usageErrorf("serve: %v", recorder.OptionError("--redact-value", err))
	}
	if f.upstream != "" {
		u, err := cli.Upstream("serve", f.upstream)
		if err != nil {
			return err
		}
		f.url = u
	}
	if f.recordNew != "" {
		if strings.ToLower(filepath.Ext(f.recordNew)) != ".db" {
			return usageErrorf("serve: --record-new %s: want a cassette .db (a .jsonl export or a script cannot be added to; mcpspy import makes a .db of an export)", f.recordNew)
		}
		for _, out := range []struct{ flag, path string }{{"--report", o.report}, {"--journal", o.journal}} {
			if out.path != "" && cli.SamePath(out.path, f.recordNew) {
				return usageErrorf("serve: %s %s is also --record-new", out.flag, out.path)
			}
		}
	} else if f.enabled() && strings.ToLower(filepath.Ext(o.sources[0])) == ".db" {
		f.recordNew = o.sources[0]
	}
	if f.recordNew != "" {
		_, err := os.Stat(f.recordNew)
		f.fresh = errors.Is(err, os.ErrNotExist)
	}
	f.alone = !slices.ContainsFunc(o.sources, func(p string) bool { return !f.startsEmpty(p) })
	return nil
}

// startsEmpty says whether the cassette SOURCE at path is the one new
// sessions go to and does not exist yet: the first run of go-vcr's "record
// once". It is then not loaded (there is nothing in it), every request
// goes to the server, and the file is created when the first session is
// recorded. Any other missing SOURCE is an error, as without a fallback.
func (f *fallbackOptions) startsEmpty(path string) bool {
	return f.fresh && cli.SamePath(path, f.recordNew)
}

func (f *fallbackOptions) enabled() bool { return f.dashes || f.upstream != "" }

// source makes the fallback source, or nil without one.
func (f *fallbackOptions) source(s streams) (*fallback.Source, error) {
	if !f.enabled() {
		return nil, nil
	}
	fb, err := fallback.New(fallback.Options{Command: f.command, URL: f.url, Header: f.header, Redact: f.redact, RedactValues: f.values,
		Record: f.recordNew, Stderr: s.Err, Log: s.Err})
	if err != nil {
		return nil, err
	}
	// Named as the sessions recorded with it name it: secrets hidden.
	if f.recordNew == "" {
		fmt.Fprintf(s.Err, "mcpmock: what %s answers is not recorded: the first SOURCE is no .db cassette (give --record-new CASSETTE)\n", fb.Target())
	}
	switch {
	case f.fresh && f.alone:
		fmt.Fprintf(s.Err, "mcpmock: %s does not exist yet: %s answers every request, recorded there for the next replay\n", f.recordNew, fb.Target())
	case f.fresh:
		fmt.Fprintf(s.Err, "mcpmock: %s does not exist yet: %s answers what no SOURCE does, recorded there for the next replay\n", f.recordNew, fb.Target())
	}
	return fb, nil
}

// summarize says at exit what the fallback did, where a user looks.
func (f *fallbackOptions) summarize(s streams, st fallback.Stats) {
	if st.Answered == 0 {
		return
	}
	where := "not recorded"
	if f.recordNew != "" {
		where = "recorded in " + f.recordNew
	}
	fmt.Fprintf(s.Err, "mcpmock: %s answered by the fallback server, %s\n", plural.Count(st.Answered, "request"), where)
}
