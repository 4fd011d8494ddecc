// Package cli is the command-line plumbing mcpspy and mcpmock share: the
// standard streams as a value (so tests can run a command in process),
// usage errors that exit 2, exit codes chosen elsewhere, and flag sets
// that report instead of exiting.
//
// It holds no product behaviour; each command's flags and wiring stay in
// its own cmd/ package.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcptape/mcptape/internal/heapfloor"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/internal/suggest"
)

// Streams are a process's standard files, replaceable in tests.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// heapFloor is the heap a command may fill with garbage before Go's
// collector runs, while what it keeps is small, instead of the runtime's
// 4 MiB (see package heapfloor). Measured on mcpspy at 16 HTTP clients:
// 16 MiB saved as much CPU as 32 MiB (~7 % of it) for 10 MiB more peak
// RSS, where 32 MiB cost 26.
const heapFloor = 16 << 20

// Main runs a command with the process's streams and arguments, cancels
// its context on SIGINT or SIGTERM, and exits with the code its error
// maps to.
func Main(prog string, run func(ctx context.Context, args []string, s Streams) error) {
	ctx, stop := interruptible(prog, os.Stderr, os.Exit)
	heapfloor.Set(heapFloor)
	err := run(ctx, os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(ExitCode(prog, err, os.Stderr))
}

// interruptible is a context that SIGINT or SIGTERM cancels, for the
// command to end in good order (a recorder stores what it has). A second
// signal ends the process at once, with the shell's code for it (130 for
// SIGINT): a command that waits, as for a cassette another process has
// locked, may take seconds to notice the first, and a user who presses
// Ctrl-C again wants out. stop ends the watch.
func interruptible(prog string, stderr io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case sig := <-signals:
				if n == 0 {
					cancel()
					continue
				}
				fmt.Fprintf(stderr, "%s: %v again: stopping at once\n", prog, sig)
				code := 128 + 2 // SIGINT's
				if s, ok := sig.(syscall.Signal); ok {
					code = 128 + int(s)
				}
				exit(code)
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		close(done)
		cancel()
	}
}

// UsageError is a mistake on the command line: exit 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef makes a UsageError.
func Usagef(format string, a ...any) error {
	return &UsageError{fmt.Sprintf(format, a...)}
}

// ExitError carries an exit code chosen elsewhere (a server's), with
// nothing more to say.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode maps an error to an exit code, printing it as one line
// "prog: error" unless it is an ExitError or a request for help: 0 ok,
// 1 runtime failure, 2 usage error.
func ExitCode(prog string, err error, stderr io.Writer) int {
	var ue *UsageError
	var ee *ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return 1
}

// NewFlags makes a flag set that reports errors instead of exiting. Parse
// prints "Usage: prog synopsis" and the flags, if any, to s.Out when the
// user asked for help (-h); before a usage error, only the synopsis and
// where the flags are described go to s.Err, so that the mistake is not
// lost above a page of flags. The flag package's own line for a bad flag
// is dropped: ExitCode prints the error once, last, where the eye lands.
func NewFlags(prog, name, synopsis string, s Streams) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	u := &flagUsage{streams: s}
	hasFlags := func() bool {
		has := false
		fs.VisitAll(func(*flag.Flag) { has = true })
		return has
	}
	u.print = func(w io.Writer) {
		fmt.Fprintf(w, "Usage: %s %s\n", prog, synopsis)
		if !hasFlags() {
			return
		}
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(u)
	}
	u.printShort = func(w io.Writer) {
		fmt.Fprintf(w, "Usage: %s %s\n", prog, synopsis)
		if hasFlags() {
			fmt.Fprintf(w, "Run \"%s help %s\" for its flags.\n", prog, name)
		}
	}
	fs.SetOutput(u)
	// The flag package calls Usage before it says why (help or a bad
	// flag); Parse prints it once it knows where it belongs.
	fs.Usage = func() { u.asked = true }
	return fs
}

// UnknownCommand is the error for args whose first word is no command of
// the program's: want lists them for the user ("serve or check"), and
// commands are every word the program takes first. A flag written before
// the command it belongs to ("mcpmock --http 0 serve x.yaml") is said to
// go after it, since the user named the command, only in the wrong place.
func UnknownCommand(args []string, want string, commands []string) error {
	if strings.HasPrefix(args[0], "-") {
		for i, a := range args[1:] {
			if slices.Contains(commands, a) {
				flags := strings.Join(args[:i+1], " ")
				return Usagef("%q comes before the command %s: flags go after it (%s %s …)", flags, a, a, flags)
			}
		}
	}
	return Usagef("unknown command %q (want %s)%s", args[0], want, suggest.DidYouMean(args[0], commands, "%s"))
}

// Help answers "PROG help [COMMAND]" (and -h, -help, --help): the
// program's usage on stdout, or with a COMMAND, what "PROG COMMAND -h"
// gives, through run.
func Help(args []string, usage string, s Streams, run func(args []string) error) error {
	if len(args) > 1 && args[0] == "help" && args[1] != "help" {
		return run([]string{args[1], "-h"})
	}
	fmt.Fprint(s.Out, usage)
	return nil
}

// flagUsage is a NewFlags set's output: it swallows the flag package's
// own messages and keeps what Parse needs to print the usage.
type flagUsage struct {
	streams    Streams
	print      func(w io.Writer) // the whole usage, for -h
	printShort func(w io.Writer) // the synopsis, before a usage error
	asked      bool
}

func (u *flagUsage) Write(p []byte) (int, error) { return len(p), nil }

// Parse parses flags, turning a flag error into a UsageError. The usage
// of a NewFlags set goes to stdout for -h, to stderr before an error.
func Parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if u, ok := fs.Output().(*flagUsage); ok && u.asked {
		u.asked = false
		if errors.Is(err, flag.ErrHelp) {
			u.print(u.streams.Out)
		} else {
			u.printShort(u.streams.Err)
		}
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return Usagef("%s: %v%s%s", fs.Name(), err, flagSuggestion(fs, err), durationHint(fs, err))
	}
	return nil
}

// durationHint is what a duration flag wants, after the flag package's
// bare "parse error" for a value such as "5" (its unit left out); "" for
// any other error.
func durationHint(fs *flag.FlagSet, err error) string {
	_, rest, ok := strings.Cut(err.Error(), " for flag -")
	if !ok || !strings.HasPrefix(err.Error(), "invalid value ") {
		return ""
	}
	name, _, _ := strings.Cut(rest, ":")
	f := fs.Lookup(name)
	if f == nil {
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, ok := g.Get().(time.Duration); ok {
			return " (want a duration with its unit, such as 5s, 500ms or 2m)"
		}
	}
	return ""
}

// undefinedFlag starts the flag package's error for a flag it does not
// know, which names the flag as typed with one dash.
const undefinedFlag = "flag provided but not defined: -"

// flagSuggestion is "; did you mean --NAME?" for an unknown flag close
// to one of fs's, or "".
func flagSuggestion(fs *flag.FlagSet, err error) string {
	typed, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := suggest.Nearest(typed, names); len(near) == 1 {
		return suggest.DidYouMean(typed, names, "-%s")
	}
	return suggest.DidYouMean(typed, names, "--%s")
}

// ParseInterleaved parses flags that may come before, between and after
// the positional arguments (Go's flag package stops at the first
// positional one), and returns the positional arguments in order. After
// "--" everything is positional.
func ParseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := Parse(fs, args); err != nil {
			return nil, err
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

// ParseAll is ParseInterleaved for a command that reads its positional
// arguments from fs afterwards (fs.Args, fs.NArg, fs.Arg): "export
// CASSETTE -o FILE" reads as "export -o FILE CASSETTE". Not for a
// command whose positional arguments run on as another command line
// (record's server), whose own flags are not mcpspy's.
func ParseAll(fs *flag.FlagSet, args []string) error {
	pos, err := ParseInterleaved(fs, args)
	if err != nil {
		return err
	}
	// Parsing again after "--" only sets fs.Args; the flags keep their values.
	return fs.Parse(append([]string{"--"}, pos...))
}

// SamePath says whether two paths name one file: the same path once made
// absolute, or (both existing) the same file by another name. Commands
// use it to refuse an output that would overwrite their input.
func SamePath(a, b string) bool {
	if absA, err := filepath.Abs(a); err == nil {
		if absB, err := filepath.Abs(b); err == nil && absA == absB {
			return true
		}
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// Headers turns repeated --header 'NAME: VALUE' flags into a header, or a
// usage error naming the command and the flag that is not one.
func Headers(cmd string, flags []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		// The errors show the name, never the value: a header given on
		// the command line is most often a credential, and the error
		// goes to a terminal or a CI log.
		switch {
		case !ok:
			word, rest, _ := strings.Cut(strings.TrimSpace(f), " ")
			if rest != "" {
				word += " …"
			}
			return nil, Usagef("%s: --header %q: want NAME: VALUE (no colon after the name)", cmd, word)
		case name == "":
			return nil, Usagef("%s: --header %q: want NAME: VALUE (the name is empty)", cmd, ": …")
		case !mcphttp.IsToken(name):
			return nil, Usagef("%s: --header %q: want NAME: VALUE (a name is one word of letters, digits and !#$%%&'*+-.^_`|~)", cmd, name+": …")
		case strings.ContainsAny(value, "\r\n\x00"):
			return nil, Usagef("%s: --header %q: the value holds a line break or a NUL, which no header may", cmd, name+": …")
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// Positive refuses a duration flag of 0 or less, which the packages
// behind the commands take for "unset" and replace by their default: a
// user who asks for no wait would silently get one.
func Positive(cmd, flag string, d time.Duration) error {
	if d <= 0 {
		return Usagef("%s: --%s %s: want a time above 0", cmd, flag, d)
	}
	return nil
}

// NonEmpty refuses an empty value of a repeatable name flag (--ignore
// ""): it names no member, so it would silently do nothing, where the
// user meant a name that a shell variable or a quoting slip lost.
func NonEmpty(cmd, flag, what string, values []string) error {
	for _, v := range values {
		if v == "" {
			return Usagef("%s: --%s wants %s, got an empty one", cmd, flag, what)
		}
	}
	return nil
}

// ReachableAddr is the HOST:PORT of the URL a listening line gives:
// the address bound, except that an unspecified one (0.0.0.0, ::), which
// a client cannot connect to everywhere (Go prints either as [::]), is
// named by this machine's loopback address of the family asked for;
// everywhere says it was one.
func ReachableAddr(asked string, bound net.Addr) (addr string, everywhere bool) {
	tcp, ok := bound.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return bound.String(), false
	}
	loopback := "::1"
	if host, _, err := net.SplitHostPort(asked); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.To4() != nil {
			loopback = "127.0.0.1"
		}
	}
	return net.JoinHostPort(loopback, strconv.Itoa(tcp.Port)), true
}

// Listen listens on TCP addr. Its error is one line naming addr, without
// the net package's own "listen tcp ADDR: bind:":
// "listen on 127.0.0.1:8000: address already in use".
func Listen(addr string) (net.Listener, error) {
	// An address that is not HOST:PORT is the user's mistake, not the
	// machine's: a usage error, as a bad flag is.
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err)
		}
		return nil, Usagef("listen on %s: %v (want HOST:PORT, such as 127.0.0.1:0)", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("listen on %s: address already in use", addr)
		}
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Upstream checks the --upstream URL of the command cmd (mcpspy record
// and rerun, mcpmock serve). One typed
// without its scheme, as curl takes it (localhost:3001/mcp), gets the
// http:// form suggested: url.Parse reads "localhost" as the scheme, or
// fails on "127.0.0.1:3001", and neither says what is missing.
func Upstream(cmd, raw string) (*url.URL, error) {
	u, err := url.Parse(raw) // which lowers the scheme's case
	shown := shownUpstream(raw)
	if schemeless(raw, u, err) {
		return nil, Usagef("%s: --upstream %q has no scheme: did you mean http://%s (ws:// for WebSocket)?", cmd, shown, shown)
	}
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without url.Parse's copy of the whole URL
		}
		return nil, Usagef("%s: --upstream %q is not a URL: %v", cmd, shown, err)
	case !slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme):
		return nil, Usagef("%s: --upstream %q: unknown scheme %q (want http, https, ws or wss)", cmd, shown, u.Scheme)
	case u.Host == "":
		return nil, Usagef("%s: --upstream %q has no host", cmd, shown)
	}
	return u, nil
}

// shownUpstream is an --upstream URL as its usage error shows it. Such an
// error ends up in CI logs and bug reports, so the URL's user info (a
// password, or a token given as the user) and its query's values are
// hidden, as the recorder hides them; none is what the error is about.
// It works on the text: the URL may be one url.Parse refuses.
func shownUpstream(raw string) string {
	const hidden = "[redacted]"
	s := raw
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			rest = hidden + rest[at:]
		}
		s = scheme + "://" + rest
	}
	s, _, hasFragment := strings.Cut(s, "#")
	if base, query, hasQuery := strings.Cut(s, "?"); hasQuery {
		params := strings.Split(query, "&")
		for i, p := range params {
			if name, _, ok := strings.Cut(p, "="); ok {
				params[i] = name + "=" + hidden
			}
		}
		s = base + "?" + strings.Join(params, "&")
	}
	if hasFragment {
		s += "#" + hidden
	}
	return s
}

// schemeless says whether raw, which url.Parse made u and err of, is a
// host (and port, and path) typed without its scheme: "127.0.0.1:3001"
// does not parse, "localhost:3001" parses as scheme "localhost", and
// "example.com/mcp" as a path.
func schemeless(raw string, u *url.URL, err error) bool {
	if strings.Contains(raw, "://") {
		return false
	}
	if v, verr := url.Parse("http://" + raw); verr != nil || v.Host == "" {
		return false
	}
	return err != nil || u.Scheme == "" || u.Opaque != "" && u.Opaque[0] >= '0' && u.Opaque[0] <= '9'
}
