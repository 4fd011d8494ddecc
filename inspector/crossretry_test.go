package inspector

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcptape/mcptape/internal/peertest/crossretry"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
)

// lintStrings is each finding as mcpspy lint prints it, without the file.
func lintStrings(fs []lint.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// modelFindings checks the given sessions of m one after another, then
// returns the findings of every session checked, in the cassette's
// session order, as lintStrings.
func modelFindings(t *testing.T, m *Model, src Source, order []int) []string {
	t.Helper()
	for _, s := range order {
		if _, err := m.ensureLint(s, src); err != nil {
			t.Fatal(err)
		}
	}
	var out []lint.Finding
	for s := range m.Sessions {
		if l := m.lintOf(s); l != nil {
			out = append(out, l.findings...)
		}
	}
	return lintStrings(out)
}

// saveTape writes tape as a .jsonl export and as a .db, for the two
// sources the inspector reads.
func saveTape(t *testing.T, tape *store.Tape) (jsonl, db string) {
	t.Helper()
	dir := t.TempDir()
	jsonl, db = filepath.Join(dir, "tape.jsonl"), filepath.Join(dir, "tape.db")
	var b bytes.Buffer
	if err := store.WriteJSONL(&b, tape); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonl, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Import(db, tape); err != nil {
		t.Fatal(err)
	}
	return jsonl, db
}

// TestModel_LintRetriesAcrossSessions_RealPeers: go-sdk's client and
// server, recorded through mcpspy's HTTP proxy, with each retry on
// another connection (another session) than its input_required result.
// The inspector's findings are mcpspy lint's (lint.Tape's), whatever
// order the sessions are checked in: on the recording, clean, and on
// copies of it made wrong, where they are about a retry and what another
// session asked.
func TestModel_LintRetriesAcrossSessions_RealPeers(t *testing.T) {
	recorded := filepath.Join(t.TempDir(), "rec.db")
	crossretry.Record(t, recorded, 2)
	load := func(t *testing.T) *store.Tape {
		tape, err := store.Load(recorded)
		if err != nil {
			t.Fatal(err)
		}
		return tape
	}
	first := crossretry.Find(t, load(t))[0]
	var recordedIDs []string
	for _, s := range load(t).Sessions {
		recordedIDs = append(recordedIDs, s.Info.ID)
	}
	retryFrame := func(tape *store.Tape) *store.Message {
		return tape.Sessions[first.RetrySession].Messages[first.RetrySeq-1]
	}
	variants := []struct {
		name string
		edit func(t *testing.T, tape *store.Tape)
		// some: lint finds something about the first retry.
		some bool
	}{
		{"as recorded", func(*testing.T, *store.Tape) {}, false},
		{"the retry answers nothing", func(t *testing.T, tape *store.Tape) {
			m := retryFrame(tape)
			m.Frame = crossretry.SetInputResponses(t, m.Frame, `{}`)
		}, true},
		{"the retry answers what was not asked", func(t *testing.T, tape *store.Tape) {
			m := retryFrame(tape)
			m.Frame = crossretry.SetInputResponses(t, m.Frame, `{"unasked":{"action":"accept"}}`)
		}, true},
		{"the ask's session cut out", func(t *testing.T, tape *store.Tape) {
			tape.Sessions = slices.Delete(tape.Sessions, first.AskSession, first.AskSession+1)
		}, true},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			tape := load(t)
			v.edit(t, tape)
			// Followed as it is recorded, the retry's session after the
			// ask's (incremental).
			followTape(t, tape, false)
			m := followTape(t, tape, true)
			live := slices.IndexFunc(tape.Sessions, func(s store.TapeSession) bool { return s.Info.ID == recordedIDs[first.RetrySession] })
			// The live cassette numbers its sessions from s1.
			if rows := visibleSeqs(m); v.some != slices.Contains(rows, fmt.Sprintf("s%d:%d", live+1, first.RetrySeq)) {
				t.Errorf("followed, the lint filter shows %q", rows)
			}
			jsonl, db := saveTape(t, tape)
			for _, path := range []string{jsonl, db} {
				want := wantLint(t, path)
				if v.some != (len(want) > 0) {
					t.Fatalf("mcpspy lint finds %q", want)
				}
				var inOrder, lastFirst []int
				for s := range tape.Sessions {
					inOrder, lastFirst = append(inOrder, s), append([]int{s}, lastFirst...)
				}
				for name, order := range map[string][]int{"in order": inOrder, "last first": lastFirst} {
					m, src := openModel(t, path)
					if diff := cmp.Diff(want, modelFindings(t, m, src, order)); diff != "" {
						t.Errorf("%s, checked %s (-mcpspy lint +inspector):\n%s", filepath.Ext(path), name, diff)
					}
				}
				// The retry's session alone, nothing else asked for.
				m, src := openModel(t, path)
				retry := recordedIDs[first.RetrySession]
				l, err := m.ensureLint(int(m.sessIdx[retry]), src)
				if err != nil {
					t.Fatal(err)
				}
				wantOne := []string{}
				for _, f := range want {
					if strings.HasPrefix(f, retry+":") {
						wantOne = append(wantOne, f)
					}
				}
				if diff := cmp.Diff(wantOne, lintStrings(l.findings)); diff != "" {
					t.Errorf("%s, the retry's session %s alone (-mcpspy lint +inspector):\n%s", filepath.Ext(path), retry, diff)
				}
			}
		})
	}
}

// permutations returns every order of 0…n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			out = append(out, slices.Insert(slices.Clone(p), i, n-1))
		}
	}
	return out
}

// wantLint is what mcpspy lint finds in the cassette at path.
func wantLint(t *testing.T, path string) []string {
	t.Helper()
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return lintStrings(lint.Tape(tape, lint.Options{}))
}

// The edge cases of retries across sessions (the retry's session first
// in the cassette, a retry before any ask, an ask never answered, two
// asks with one requestState): the inspector finds what mcpspy lint
// finds, whatever order it checks the sessions in.
func TestModel_LintRetriesAcrossSessions(t *testing.T) {
	for _, c := range crossretry.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			jsonl, db := saveTape(t, c.Tape)
			for _, path := range []string{jsonl, db} {
				want := wantLint(t, path)
				if diff := cmp.Diff(c.Want, want, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("mcpspy lint on %s (-want +got):\n%s", filepath.Ext(path), diff)
				}
				for _, order := range permutations(len(c.Tape.Sessions)) {
					m, src := openModel(t, path)
					if diff := cmp.Diff(want, modelFindings(t, m, src, order)); diff != "" {
						t.Errorf("%s, sessions checked in order %v (-mcpspy lint +inspector):\n%s", filepath.Ext(path), order, diff)
					}
				}
			}
		})
	}
}

// followTape writes tape into a new cassette as recorders would have,
// each session opened at its start, each message at its time and each
// session ended at its end, while a model follows it, polling after each
// step. Under the filter "lint" (filter set) the model checks whatever
// arrives; without, only the session of each step, as a user moving to
// the newest message makes the detail pane check it. After every poll
// the findings of the sessions checked are mcpspy lint's for the cassette
// as it then stands.
func followTape(t *testing.T, tape *store.Tape, filter bool) *Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	m.following = true
	if filter {
		f, _ := ParseFilter("lint")
		if err := m.SetFilter(f, src); err != nil {
			t.Fatal(err)
		}
	}
	crossretry.Rewrite(t, w, tape, func(at time.Time, sess string) {
		poll(t, m, src)
		if !filter {
			if _, err := m.ensureLint(int(m.sessIdx[sess]), src); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]bool{}
		var got []lint.Finding
		for s := range m.Sessions {
			if l := m.lintOf(s); l != nil {
				got = append(got, l.findings...)
				want[m.Sessions[s].Info.ID] = true
			}
		}
		var wanted []string
		for _, f := range wantLint(t, path) {
			if want[strings.SplitN(f, ":", 2)[0]] {
				wanted = append(wanted, f)
			}
		}
		if diff := cmp.Diff(wanted, lintStrings(got), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("following, at %s (-mcpspy lint +inspector):\n%s", at.Format("15:04:05.000000"), diff)
		}
	})
	return m
}

// Following a cassette as it is recorded, the inspector judges a retry
// against another session's ask as soon as the retry arrives, and its
// findings are mcpspy lint's at every step.
func TestModel_LintRetriesAcrossSessionsFollow(t *testing.T) {
	for _, c := range crossretry.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			followTape(t, c.Tape, false)
			m := followTape(t, c.Tape, true)
			// Under the filter, each row as it arrived: a retry's
			// findings were known then.
			rows := visibleSeqs(m)
			var want []string
			for _, w := range c.Want {
				want = append(want, strings.SplitN(w, ": ", 2)[0])
			}
			if diff := cmp.Diff(slices.Compact(want), rows, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("rows the lint filter shows (-want +got):\n%s", diff)
			}
			if n := m.TakeLateFindings(); n != 0 {
				t.Errorf("%d findings came late, on rows already passed", n)
			}
		})
	}
}
