package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcptape/mcptape/internal/peertest/crossretry"
	"github.com/mcptape/mcptape/store"
)

// showFindings reads show --lint's output back into findings as mcpspy
// lint prints them ("s2:1: error: … [rule]"), sorted: a finding under a
// message's line is about that message, one on a line of its own says
// where it is. The "· see" that show adds goes.
func showFindings(out string) []string {
	var got []string
	at := ""
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		text, _, _ := strings.Cut(l, " · see ")
		switch {
		case l == "":
		case strings.HasPrefix(l, "    lint: "):
			got = append(got, at+": "+strings.TrimPrefix(text, "    lint: "))
		case strings.HasPrefix(l, "lint: "):
			got = append(got, strings.TrimPrefix(text, "lint: "))
		default: // a message's line: its seq comes first
			at = strings.Fields(l)[0]
		}
	}
	slices.Sort(got)
	return got
}

// lintFindings is what mcpspy lint prints about the cassette at path,
// without the file name, sorted.
func lintFindings(t *testing.T, path string) []string {
	t.Helper()
	code, out, errOut := runCaptured("lint", path)
	if code > 1 {
		t.Fatalf("mcpspy lint %s: exit %d\n%s", path, code, errOut)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l != "" {
			got = append(got, strings.TrimPrefix(l, path+" "))
		}
	}
	slices.Sort(got)
	return got
}

// saveTape writes tape as a .db and as a .jsonl export.
func saveTape(t *testing.T, tape *store.Tape) []string {
	t.Helper()
	dir := t.TempDir()
	db, jsonl := filepath.Join(dir, "tape.db"), filepath.Join(dir, "tape.jsonl")
	if _, err := store.Import(db, tape); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := store.WriteJSONL(&b, tape); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonl, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{db, jsonl}
}

// recordWrongRetry records go-sdk's client and server through mcpspy's
// HTTP proxy, each retry on another connection than its input_required
// result, and returns the recording with its first retry made to answer
// an input request nobody asked, and where that retry is.
func recordWrongRetry(t *testing.T) (*store.Tape, crossretry.Exchange) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "rec.db")
	crossretry.Record(t, db, 2)
	tape := readTape(t, db)
	first := crossretry.Find(t, tape)[0]
	m := tape.Sessions[first.RetrySession].Messages[first.RetrySeq-1]
	m.Frame = crossretry.SetInputResponses(t, m.Frame, `{"unasked":{"action":"accept"}}`)
	return tape, first
}

// show --lint prints mcpspy lint's findings about a retry recorded in
// another session than the input_required result it answers: on a
// recording of real peers made wrong, and on the edge cases.
func TestMcpspy_ShowLintRetriesAcrossSessions(t *testing.T) {
	wrong, first := recordWrongRetry(t)
	cases := []crossretry.Case{{Name: "real peers, a retry made wrong", Tape: wrong}}
	cases = append(cases, crossretry.Cases()...)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			for _, path := range saveTape(t, c.Tape) {
				want := lintFindings(t, path)
				if c.Want != nil {
					if diff := cmp.Diff(slices.Sorted(slices.Values(c.Want)), want); diff != "" {
						t.Fatalf("mcpspy lint %s (-want +got):\n%s", filepath.Ext(path), diff)
					}
				}
				if diff := cmp.Diff(want, showFindings(showOutput(t, "--lint", path)), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s (-mcpspy lint +show --lint):\n%s", filepath.Ext(path), diff)
				}
			}
		})
	}
	retry := wrong.Sessions[first.RetrySession].Info.ID
	out := showOutput(t, "--lint", "--session", retry, saveTape(t, wrong)[0])
	if !strings.Contains(out, `    lint: error: answers input request "unasked", which the server did not ask (asked in `) {
		t.Errorf("show --lint --session %s, the retry's session alone:\n%s", retry, out)
	}
}

// show --follow --lint, following real peers' traffic as it is recorded
// (the wrong retry's session opening after its ask's), prints the retry's
// findings under its line as it arrives: in the end, mcpspy lint's.
func TestMcpspy_ShowLintFollowRetriesAcrossSessions(t *testing.T) {
	t.Parallel()
	wrong, _ := recordWrongRetry(t)
	db := filepath.Join(t.TempDir(), "live.db")
	w, err := store.NewWriter(db, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show := startShow(t, "--follow", "--lint", db)
	seen := 0
	crossretry.Rewrite(t, w, wrong, func(time.Time, string) {
		// A step at a time, each shown before the next is written, as a
		// slow recording would be.
		n := 0
		for _, s := range readTape(t, db).Sessions {
			n += len(s.Messages)
		}
		if n > seen {
			show.wait(t, "\n", n)
			seen = n
		}
	})
	show.wait(t, `"unasked", which the server did not ask`, 1)
	out := show.stop(t)
	if strings.Contains(out, "\nlint: ") || strings.HasPrefix(out, "lint: ") {
		t.Errorf("a finding came late, on a line of its own:\n%s", out)
	}
	if diff := cmp.Diff(lintFindings(t, db), showFindings(out)); diff != "" {
		t.Errorf("(-mcpspy lint +show --follow --lint):\n%s", diff)
	}
}
