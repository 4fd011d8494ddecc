package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// A recording saved without a telling name (export > bug, cp x.db
// cassette) reads in every reading command as it does under its own name.
func TestMcpspy_ReadersSniffUnnamedFiles(t *testing.T) {
	for _, u := range peertest.ShippedUnnamed(t) {
		shipped, named, unnamed := u.Shipped, shippedCassette(t, u.Shipped), u.Path
		for _, args := range [][]string{{"ls"}, {"show"}, {"export"}, {"lint"}, {"diff", named}} {
			t.Run(shipped+" "+args[0], func(t *testing.T) {
				wantCode, stdout, stderr := runCaptured(append(args, named)...)
				want := strings.NewReplacer(named+" ", unnamed+" ", filepath.Base(named), filepath.Base(unnamed)).Replace(stdout + stderr)
				if args[0] == "diff" { // A is named as it was
					want = strings.Replace(stdout+stderr, "+++ b: "+named, "+++ b: "+unnamed, 1)
				}
				code, stdout, stderr := runCaptured(append(args, unnamed)...)
				if got := stdout + stderr; code != wantCode || got != want {
					t.Errorf("%v %s: exit %d, output:\n%s\nwant exit %d and:\n%s", args, unnamed, code, got, wantCode, want)
				}
			})
		}
	}
}
