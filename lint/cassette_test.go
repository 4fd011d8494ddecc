package lint_test

import (
	"cmp"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest/crossretry"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
)

func strs(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// withCassette is what a caller of Cassette does: each session's Checker
// findings, then the cassette's about its retries, merged by seq.
func withCassette(own []lint.Finding, cas *lint.Cassette, session string) []lint.Finding {
	out := append(slices.Clip(own), cas.Findings(session)...)
	slices.SortStableFunc(out, func(a, b lint.Finding) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// permutations returns every order of 0…n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := slices.Insert(slices.Clone(p), i, n-1)
			out = append(out, q)
		}
	}
	return out
}

// Tape judges a retry recorded in another session than its ask, in every
// edge case: the retry's session first in the cassette, a retry before
// any ask, an ask never answered, two asks sharing a requestState.
func TestTape_RetriesAcrossSessions(t *testing.T) {
	for _, c := range crossretry.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			if diff := gocmp.Diff(c.Want, strs(lint.Tape(c.Tape, lint.Options{}))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got := lint.Tape(c.Tape, lint.Options{Skip: []string{"input-responses"}}); len(got) != 0 {
				t.Errorf("input-responses skipped: %v", got)
			}
		})
	}
}

// A Cassette finds what Tape finds whatever order its sessions are
// checked in, whether Findings is asked once at the end or after every
// session (and then asked again), and when a session is checked again
// from its start, as the inspector does when a session it follows ends.
func TestCassette_AnyOrder(t *testing.T) {
	for _, c := range crossretry.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			want := strs(lint.Tape(c.Tape, lint.Options{}))
			for _, order := range permutations(len(c.Tape.Sessions)) {
				cas := lint.NewCassette(lint.Options{})
				own := make([][]lint.Finding, len(c.Tape.Sessions))
				for _, i := range order {
					s := &c.Tape.Sessions[i]
					for again := range 2 { // the second time replaces the first
						k := cas.Checker(s.Info)
						for _, m := range s.Messages {
							k.Add(m)
						}
						if again == 0 {
							continue
						}
						own[i] = k.Finish()
					}
					cas.Findings(s.Info.ID) // with part of the cassette known
				}
				var got []lint.Finding
				for i, s := range c.Tape.Sessions {
					got = append(got, withCassette(own[i], cas, s.Info.ID)...)
				}
				if diff := gocmp.Diff(want, strs(got)); diff != "" {
					t.Errorf("sessions checked in order %v (-Tape +Cassette):\n%s", order, diff)
				}
			}
		})
	}
}

// Checked a message at a time in the order they were recorded, as the
// inspector follows a cassette, the cassette's findings about a retry
// are known as soon as the retry is, and are then Tape's.
func TestCassette_Incremental(t *testing.T) {
	for _, c := range crossretry.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var msgs []*store.Message
			for _, s := range c.Tape.Sessions {
				msgs = append(msgs, s.Messages...)
			}
			slices.SortStableFunc(msgs, func(a, b *store.Message) int { return a.Time.Compare(b.Time) })
			cas := lint.NewCassette(lint.Options{})
			checkers := map[string]*lint.Checker{}
			info := map[string]store.SessionInfo{}
			for _, s := range c.Tape.Sessions {
				info[s.Info.ID] = s.Info
			}
			for _, m := range msgs {
				k := checkers[m.Session]
				if k == nil {
					k = cas.Checker(info[m.Session])
					checkers[m.Session] = k
				}
				k.Add(m)
				if cas.Retries(m.Session) > 0 {
					for _, f := range cas.Findings(m.Session) {
						if !slices.Contains(c.Want, f.String()) {
							t.Errorf("after %s:%d, %s", m.Session, m.Seq, f)
						}
					}
				}
			}
			var got []lint.Finding
			for _, s := range c.Tape.Sessions {
				got = append(got, withCassette(checkers[s.Info.ID].Finish(), cas, s.Info.ID)...)
			}
			if diff := gocmp.Diff(c.Want, strs(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
