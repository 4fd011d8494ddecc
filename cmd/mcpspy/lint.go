package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/internal/suggest"
	"github.com/mcptape/mcptape/lint"
)

const lintSynopsis = "lint [--session ID] [--skip RULE] [--min SEVERITY] [--strict] [--json] CASSETTE...\n       mcpspy lint --rules"

// runLint checks recorded sessions against the protocol (package lint)
// and prints one line per finding, as a compiler prints errors.
func runLint(args []string, s streams) error {
	fs := newFlags("lint", lintSynopsis, s)
	var sessions multiFlag
	fs.Var(&sessions, "session", "check only the session `ID` (an id or a name; repeatable; default: every session of every CASSETTE)")
	var skip multiFlag
	fs.Var(&skip, "skip", "do not report the rule named `RULE` (repeatable; --rules lists them)")
	minimum := fs.String("min", "info", "print findings of `SEVERITY` and above: info, warning or error")
	strict := fs.Bool("strict", false, "exit 1 on warnings too, not only on errors")
	asJSON := fs.Bool("json", false, "print each finding as a JSON object on a line of its own")
	rules := fs.Bool("rules", false, "list the rules, with their severity and what they check, and exit")
	positional, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *rules {
		if len(positional) > 0 {
			return usageErrorf("lint: --rules lists the rules and reads no CASSETTE, got %d arguments", len(positional))
		}
		return printRules(s)
	}
	floor, ok := lint.ParseSeverity(*minimum)
	if !ok {
		return usageErrorf("lint: --min %q: want info, warning or error", *minimum)
	}
	for _, r := range skip {
		if !lint.KnownRule(r) {
			var names []string
			for _, rule := range lint.Rules() {
				names = append(names, rule.Name)
			}
			return usageErrorf("lint: --skip %q: no such rule (mcpspy lint --rules lists them)%s", r, suggest.DidYouMean(r, names, "%s"))
		}
	}
	if len(positional) == 0 {
		return usageErrorf("lint: no CASSETTE")
	}
	if err := oneStdin("lint", positional); err != nil {
		return err
	}
	// Each cassette is checked whole, so that a retry recorded in another
	// session than its call is judged; --session only picks what is shown.
	// One that cannot be read does not keep the others from being checked:
	// its error comes at the end, as mcpmock check gives them, one line
	// each, and the exit is 1.
	var cassettes []sourceTape
	var unread []error
	nSessions := 0
	for _, path := range positional {
		c, err := loadTape("lint", path, sessions, s.In)
		if err != nil {
			unread = append(unread, err)
			continue
		}
		cassettes = append(cassettes, c)
		nSessions += len(c.sessions())
	}
	failed := func() error {
		for _, err := range unread {
			fmt.Fprintf(s.Err, "mcpspy: %v\n", salvageHint(err))
		}
		return &cli.ExitError{Code: 1}
	}
	if len(cassettes) == 0 {
		return failed()
	}

	w := bufio.NewWriter(s.Out)
	enc := json.NewEncoder(w)
	var counts [3]int
	for _, ss := range cassettes {
		for _, f := range lint.Tape(ss.tape, lint.Options{Skip: skip}) {
			if f.Severity < floor || !ss.shows(f.Session) {
				continue
			}
			counts[f.Severity]++
			if *asJSON {
				if err := enc.Encode(jsonFinding{File: ss.source, Session: f.Session, Seq: f.Seq, Related: f.Related, Rule: f.Rule, Severity: f.Severity.String(), Message: f.Message}); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(w, "%s %s\n", ss.source, f)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	notRead := ""
	if len(unread) > 0 {
		notRead = fmt.Sprintf("; %s not read", plural.Count(len(unread), "cassette"))
	}
	fmt.Fprintf(s.Err, "mcpspy: lint: %s in %s%s\n", findingCounts(counts), plural.Count(nSessions, "session"), notRead)
	if len(unread) > 0 || counts[lint.Error] > 0 || *strict && counts[lint.Warning] > 0 {
		return failed()
	}
	return nil
}

// jsonFinding is a finding as --json prints it.
type jsonFinding struct {
	File     string `json:"file"`
	Session  string `json:"session"`
	Seq      uint64 `json:"seq,omitempty"`
	Related  uint64 `json:"related,omitempty"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// findingCounts says "no findings" or "2 errors, 1 warning, 3 info".
func findingCounts(counts [3]int) string {
	var parts []string
	for _, sev := range []lint.Severity{lint.Error, lint.Warning, lint.Info} {
		if n := counts[sev]; n > 0 {
			if sev == lint.Info {
				// "info" is uncountable, as the inspector says it, and
				// the word --min and lint:info take.
				parts = append(parts, fmt.Sprintf("%d info", n))
				continue
			}
			parts = append(parts, plural.Count(n, sev.String()))
		}
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}

func printRules(s streams) error {
	tw := tabwriter.NewWriter(s.Out, 0, 8, 2, ' ', 0)
	for _, r := range lint.Rules() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Severity, r.Summary)
	}
	return tw.Flush()
}
