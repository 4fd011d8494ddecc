package peertest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// READMECommand is one line of the README's "Commands" block: a program's
// subcommand and the flags the README gives it.
type READMECommand struct {
	Line  string
	Sub   string   // "record", "serve", …
	Flags []string // "--session", "-o", …
}

var readmeFlag = regexp.MustCompile(`(?:^|[\s\[|])(--?[a-z][a-z-]*)`)

// READMECommands returns the lines of the README's Commands block for one
// program ("mcpspy" or "mcpmock"), so that a test can hold them against
// the program's -h: the README must not promise a flag the program lacks.
func READMECommands(tb testing.TB, prog string) []READMECommand {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(ModuleRoot(), "README.md"))
	if err != nil {
		tb.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## Commands\n")
	if !ok {
		tb.Fatal("README.md has no ## Commands section")
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var out []READMECommand
	for line := range strings.SplitSeq(block, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != prog {
			continue
		}
		c := READMECommand{Line: line, Sub: fields[1]}
		opts, _, _ := strings.Cut(line, " -- ") // what follows -- is the server's
		for _, m := range readmeFlag.FindAllStringSubmatch(opts, -1) {
			c.Flags = append(c.Flags, m[1])
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		tb.Fatalf("README.md's Commands block has no %s line", prog)
	}
	return out
}

// CheckREADMEFlags fails the test for every flag the README's Commands
// block gives prog that the subcommand's -h does not list. help returns
// what "prog SUB -h" printed, stdout and stderr together.
func CheckREADMEFlags(tb testing.TB, prog string, help func(sub string) string) {
	tb.Helper()
	for _, c := range READMECommands(tb, prog) {
		h := help(c.Sub)
		for _, f := range c.Flags {
			if !strings.Contains(h, "\n  -"+strings.TrimLeft(f, "-")) {
				tb.Errorf("README line %q: %s %s has no flag %s", c.Line, prog, c.Sub, f)
			}
		}
	}
}
