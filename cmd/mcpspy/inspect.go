package main

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mcptape/mcptape/inspector"
)

// runInspect opens the inspector on a cassette. A file that cannot be
// read fails here, with the store's one-line reason, before the terminal
// is taken over.
func runInspect(ctx context.Context, args []string, s streams) error {
	fs := newFlags("inspect", "inspect [--follow] CASSETTE", s)
	follow := fs.Bool("follow", false, "show messages that recorders in other processes add, as they arrive (.db only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("inspect: want exactly one CASSETTE, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	if *follow && strings.EqualFold(filepath.Ext(path), ".jsonl") {
		return usageErrorf("inspect: --follow needs a .db cassette; %s is a JSONL export, which recorders do not write", path)
	}
	return inspector.Run(ctx, path, inspector.Options{Follow: *follow})
}
