package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int
		out  string
	}{
		{"ok", nil, 0, ""},
		{"help", flag.ErrHelp, 0, ""},
		{"usage", Usagef("record: missing --"), 2, "prog: record: missing --\n"},
		{"wrapped usage", fmt.Errorf("x: %w", Usagef("bad")), 2, "prog: x: bad\n"},
		{"server's code", &ExitError{Code: 7}, 7, ""},
		{"runtime", errors.New("cassette: locked"), 1, "prog: cassette: locked\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if got := ExitCode("prog", tt.err, &b); got != tt.code || b.String() != tt.out {
				t.Errorf("ExitCode = %d, %q; want %d, %q", got, b.String(), tt.code, tt.out)
			}
		})
	}
}

func TestParse_UsageError(t *testing.T) {
	var b bytes.Buffer
	fs := NewFlags("prog", "ls", "ls CASSETTE", Streams{Err: &b})
	err := Parse(fs, []string{"--nope"})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Msg != "ls: flag provided but not defined: -nope" {
		t.Errorf("Parse error = %v", err)
	}
	if !bytes.Contains(b.Bytes(), []byte("Usage: prog ls CASSETTE")) {
		t.Errorf("usage not printed: %q", b.String())
	}
	// The error itself is ExitCode's one line, after the usage; the flag
	// package's own copy of it would say it twice.
	if bytes.Contains(b.Bytes(), []byte("not defined")) {
		t.Errorf("the error printed before the usage too: %q", b.String())
	}
}

// A duration given without its unit says what a duration looks like; the
// flag package says only "parse error". Other bad values are left as the
// flag package words them.
func TestParse_DurationHint(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"--grace=5", `rec: invalid value "5" for flag -grace: parse error (want a duration with its unit, such as 5s, 500ms or 2m)`},
		{"--grace=soon", `rec: invalid value "soon" for flag -grace: parse error (want a duration with its unit, such as 5s, 500ms or 2m)`},
		{"--count=x", `rec: invalid value "x" for flag -count: parse error`},
	}
	for _, tt := range tests {
		fs := NewFlags("prog", "rec", "rec", Streams{Err: io.Discard})
		fs.Duration("grace", time.Second, "")
		fs.Int("count", 0, "")
		if err := Parse(fs, []string{tt.arg}); err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v; want %s", tt.arg, err, tt.want)
		}
	}
}

// A flag that is not one, but close to one, gets a suggestion.
func TestParse_SuggestsFlag(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"--upstrem=x", "rec: flag provided but not defined: -upstrem; did you mean --upstream?"},
		{"-O", "rec: flag provided but not defined: -O; did you mean -o?"},
		{"-0", "rec: flag provided but not defined: -0"},
		{"--colour", "rec: flag provided but not defined: -colour"},
		{"-o", "rec: flag needs an argument: -o"},
	}
	for _, tt := range tests {
		fs := NewFlags("prog", "rec", "rec", Streams{Err: io.Discard})
		fs.String("upstream", "", "")
		fs.String("o", "", "")
		if err := Parse(fs, []string{tt.arg}); err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v; want %s", tt.arg, err, tt.want)
		}
	}
}

func TestNewFlags_Usage(t *testing.T) {
	tests := []struct {
		name     string
		synopsis string
		flags    func(fs *flag.FlagSet)
		want     string // for -h
		wantErr  string // before a usage error
	}{
		{"no flags", "ls CASSETTE", func(*flag.FlagSet) {}, "Usage: prog ls CASSETTE\n", "Usage: prog ls CASSETTE\n"},
		{"a flag", "inspect CASSETTE", func(fs *flag.FlagSet) { fs.Bool("follow", false, "keep going") },
			"Usage: prog inspect CASSETTE\n\nFlags:\n  -follow\n    \tkeep going\n",
			"Usage: prog inspect CASSETTE\nRun \"prog help x\" for its flags.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			fs := NewFlags("prog", "x", tt.synopsis, Streams{Out: &out, Err: &errOut})
			tt.flags(fs)
			// Asked for, help goes to stdout (for a pager); nothing to stderr.
			if err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("Parse(-h) = %v", err)
			}
			if out.String() != tt.want || errOut.Len() != 0 {
				t.Errorf("-h printed %q to stdout and %q to stderr, want %q and nothing", out.String(), errOut.String(), tt.want)
			}
			// Before a usage error, the synopsis goes to stderr, and
			// where to find the flags, not the flags themselves.
			out.Reset()
			if err := Parse(fs, []string{"-bogus"}); err == nil {
				t.Fatal("Parse(-bogus) succeeded")
			}
			if errOut.String() != tt.wantErr || out.Len() != 0 {
				t.Errorf("-bogus printed %q to stderr and %q to stdout, want %q and nothing", errOut.String(), out.String(), tt.wantErr)
			}
		})
	}
}

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args     []string
		wantPos  []string
		wantFlag string
	}{
		{[]string{"a.db", "--x", "1", "b.db"}, []string{"a.db", "b.db"}, "1"},
		{[]string{"--x", "2", "a.db"}, []string{"a.db"}, "2"},
		{[]string{"a.db", "--", "--x", "b"}, []string{"a.db", "--x", "b"}, ""},
		{nil, nil, ""},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		x := fs.String("x", "", "")
		pos, err := ParseInterleaved(fs, tt.args)
		if err != nil || !slices.Equal(pos, tt.wantPos) || *x != tt.wantFlag {
			t.Errorf("%q: positional %q, -x %q, err %v; want %q, %q", tt.args, pos, *x, err, tt.wantPos, tt.wantFlag)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := ParseInterleaved(fs, []string{"a", "--bogus"}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown flag after a positional: %v", err)
	}
}

func TestHeaders(t *testing.T) {
	h, err := Headers("serve", []string{"Authorization: Bearer a:b", "x-trace:1", "X-Trace: 2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Authorization"); got != "Bearer a:b" {
		t.Errorf("Authorization = %q; the value keeps its own colons", got)
	}
	if got := h.Values("X-Trace"); len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Errorf("X-Trace = %q; repeated names add values, names are canonical", got)
	}
	// The errors name the header, never its value (a credential, most
	// often, bound for a terminal or a CI log).
	for _, tc := range []struct{ bad, want string }{
		{"Authorization Bearer s3cret", `serve: --header "Authorization …": want NAME: VALUE (no colon after the name)`},
		{"nocolon", `serve: --header "nocolon": want NAME: VALUE (no colon after the name)`},
		{": s3cret", `serve: --header ": …": want NAME: VALUE (the name is empty)`},
		{"two words: s3cret", `serve: --header "two words: …": want NAME: VALUE (a name is one word`},
		{"X-Key: s3cret\r\nX-Injected: 1", `serve: --header "X-Key: …": the value holds a line break or a NUL, which no header may`},
	} {
		_, err := Headers("serve", []string{tc.bad})
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Headers(%q) = %v; want a usage error saying %q, without the value", tc.bad, err, tc.want)
		}
	}
}

func TestPositive(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"above 0", time.Millisecond, ""},
		{"0", 0, "record: --grace 0s: want a time above 0"},
		{"negative", -time.Second, "record: --grace -1s: want a time above 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Positive("record", "grace", tt.d)
			var usage *UsageError
			if tt.want == "" && err != nil || tt.want != "" && (!errors.As(err, &usage) || err.Error() != tt.want) {
				t.Errorf("Positive(%s) = %v, want %q", tt.d, err, tt.want)
			}
		})
	}
}

func TestListen(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	tests := []struct {
		name, addr, want string
		usage            bool // the address itself is wrong: exit 2
	}{
		{"in use", busy.Addr().String(), "listen on " + busy.Addr().String() + ": address already in use", false},
		{"no port", "nonsense", "listen on nonsense: missing port in address (want HOST:PORT, such as 127.0.0.1:0)", true},
		{"port out of range", "127.0.0.1:99999", "listen on 127.0.0.1:99999: invalid port (want HOST:PORT, such as 127.0.0.1:0)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := Listen(tt.addr)
			if err == nil {
				ln.Close()
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("Listen(%q) = %v, want %q", tt.addr, err, tt.want)
			}
			var ue *UsageError
			if errors.As(err, &ue) != tt.usage {
				t.Errorf("Listen(%q): a usage error is %v, want %v", tt.addr, !tt.usage, tt.usage)
			}
		})
	}
}

// An --upstream's usage error may be pasted into a bug report or land in
// a CI log: it shows neither the URL's user info nor its query's values,
// even when url.Parse refuses the URL, and the rest as it was typed.
func TestUpstream_ErrorHidesSecrets(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"unknown scheme", "ftp://u:s3cret@h.example/mcp?api_key=s3cret&page=2",
			`--upstream "ftp://[redacted]@h.example/mcp?api_key=[redacted]&page=[redacted]": unknown scheme "ftp"`},
		{"not a URL", "http://u:s3cret%zz@h.example/mcp",
			`--upstream "http://[redacted]@h.example/mcp" is not a URL: invalid URL escape "%zz"`},
		{"a token as the user, no host", "http://s3cret@/mcp#s3cret", `--upstream "http://[redacted]@/mcp#[redacted]" has no host`},
		{"no scheme", "localhost:3001/mcp?token=s3cret",
			`--upstream "localhost:3001/mcp?token=[redacted]" has no scheme: did you mean http://localhost:3001/mcp?token=[redacted] `},
		{"nothing to hide", "ftp://127.0.0.1:1/", `--upstream "ftp://127.0.0.1:1/": unknown scheme "ftp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Upstream("record", tt.raw)
			if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Upstream(%q) = %v\nwant it to hold %q, and no s3cret", tt.raw, err, tt.want)
			}
		})
	}
}
