package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"
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
}
