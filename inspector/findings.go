package inspector

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
)

// Protocol findings (package lint) are computed per session the first time
// something asks for them: the lint filter term, the detail pane, the L key,
// show --lint. Never at open: checking reads every frame of a session,
// about 0.7 s for 250,000 messages, where opening reads only summaries.

// sessionLint is what package lint found in one session.
type sessionLint struct {
	// findings are in seq order, the session's own (seq 0) first.
	findings []lint.Finding
	// checker is kept while the session is being recorded, so that what
	// follow mode adds is checked without reading the session again.
	checker *lint.Checker
	fed     uint64 // the last seq checked
	// final says the findings include the checks that need the whole
	// session (Finish ran): it had ended when checked, or nothing more
	// was to come (no follow mode). ended says the former.
	final, ended bool
}

// autoLintMax is the largest session the detail panes check on their own
// when they show one of its messages: a few tens of milliseconds. Bigger
// sessions wait for a key or a filter that asks for lint.
const autoLintMax = 10_000

// lintOf returns the findings of session sess if they have been computed,
// without computing them.
func (m *Model) lintOf(sess int) *sessionLint {
	if sess < 0 || sess >= len(m.lints) {
		return nil
	}
	return m.lints[sess]
}

// ensureLint computes the findings of session sess, or brings them up to
// date with the messages follow mode added since: a session still being
// recorded feeds its kept checker; one that has ended since it was checked
// is checked again whole, because only then are its unanswered requests
// known. Outside follow mode a session with no end (its recorder was
// killed) is checked whole as it stands, as mcpspy lint checks it.
func (m *Model) ensureLint(sess int, src Source) (*sessionLint, error) {
	s := &m.Sessions[sess]
	ended := s.Info.End != nil
	final := ended || !m.following
	l := m.lintOf(sess)
	if l != nil && l.fed == s.LastSeq && l.ended == ended && l.final == final {
		return l, nil
	}
	if src == nil {
		return nil, fmt.Errorf("lint %s: no cassette to read", s.Info.ID)
	}
	if l == nil || l.checker == nil || final {
		l = &sessionLint{checker: lint.NewChecker(s.Info, lint.Options{}), final: final, ended: ended}
	}
	if s.LastSeq > l.fed {
		err := src.Messages(s.Info.ID, l.fed+1, s.LastSeq, func(msg *store.Message) error {
			l.checker.Add(msg)
			return nil
		})
		if err != nil {
			// The checker took part of the messages: start afresh next time.
			if sess < len(m.lints) {
				m.lints[sess] = nil
			}
			return nil, fmt.Errorf("lint %s: %w", s.Info.ID, err)
		}
		l.fed = s.LastSeq
	}
	if final {
		l.findings, l.checker = l.checker.Finish(), nil
	} else {
		l.findings = l.checker.Findings()
	}
	for len(m.lints) <= sess {
		m.lints = append(m.lints, nil)
	}
	m.lints[sess] = l
	return l, nil
}

// lintScope computes the findings of every session in scope.
func (m *Model) lintScope(src Source) error {
	for s := range m.Sessions {
		if m.scope >= 0 && s != m.scope {
			continue
		}
		if _, err := m.ensureLint(s, src); err != nil {
			return err
		}
	}
	return nil
}

// refreshLint brings the findings already computed up to date with what
// follow mode added; sessions never checked stay unchecked.
func (m *Model) refreshLint(src Source) error {
	for s, l := range m.lints {
		if l == nil {
			continue
		}
		if _, err := m.ensureLint(s, src); err != nil {
			return err
		}
	}
	return nil
}

// findingsUpTo counts, per session, the findings computed so far about
// its messages up to last[session] (nil last: none).
func (m *Model) findingsUpTo(last []uint64) []int {
	if last == nil {
		return nil
	}
	counts := make([]int, len(last))
	for i, upTo := range last {
		if l := m.lintOf(i); l != nil {
			for _, f := range l.findings {
				if f.Seq > 0 && f.Seq <= upTo {
					counts[i]++
				}
			}
		}
	}
	return counts
}

// TakeLateFindings returns how many findings follow mode has found on
// rows the lint filter had already passed over, and forgets them. The
// table does not take those rows in by itself: that would move rows under
// the selection, which follow mode never does.
func (m *Model) TakeLateFindings() int {
	n := m.lateFindings
	m.lateFindings = 0
	return n
}

// findingsAt returns the findings about message seq of a session, as
// computed so far (none when the session has not been checked).
func (m *Model) findingsAt(sess uint32, seq uint64) []lint.Finding {
	l := m.lintOf(int(sess))
	if l == nil {
		return nil
	}
	return findingsOf(l.findings, seq)
}

// findingsOf picks the findings about seq from a session's, which are in
// seq order.
func findingsOf(fs []lint.Finding, seq uint64) []lint.Finding {
	i, ok := slices.BinarySearchFunc(fs, seq, func(f lint.Finding, seq uint64) int { return cmp.Compare(f.Seq, seq) })
	if !ok {
		return nil
	}
	j := i + 1
	for j < len(fs) && fs[j].Seq == seq {
		j++
	}
	return fs[i:j]
}

// worst is the highest severity among findings, which must not be empty.
func worst(fs []lint.Finding) lint.Severity {
	w := fs[0].Severity
	for _, f := range fs[1:] {
		w = max(w, f.Severity)
	}
	return w
}

// findingMark says whether the table marks message idx, and how badly:
// only once its session has been checked, so drawing never checks.
func (m *Model) findingMark(idx int) (lint.Severity, bool) {
	r := &m.rows[idx]
	fs := m.findingsAt(r.sess, r.seq)
	if len(fs) == 0 {
		return 0, false
	}
	return worst(fs), true
}

// MessageFindings returns the findings about the message with the given
// stable index, checking its session first if that has not been done.
func (m *Model) MessageFindings(idx int, src Source) ([]lint.Finding, error) {
	if idx < 0 || idx >= len(m.rows) {
		return nil, nil
	}
	r := &m.rows[idx]
	if _, err := m.ensureLint(int(r.sess), src); err != nil {
		return nil, err
	}
	return m.findingsAt(r.sess, r.seq), nil
}

// NextFinding checks the sessions in scope, then returns the visible
// position of the next (dir 1) or previous (dir -1) message with a
// finding after from, wrapping around; -1 if there is none. counts are
// the findings in scope per severity, the sessions' own included.
func (m *Model) NextFinding(from, dir int, src Source) (int, [3]int, error) {
	var counts [3]int
	if err := m.lintScope(src); err != nil {
		return -1, counts, err
	}
	for s, l := range m.lints {
		if l == nil || m.scope >= 0 && s != m.scope {
			continue
		}
		countFindings(&counts, l.findings)
	}
	n := len(m.visible)
	for k := 1; k <= n; k++ {
		i := ((from+dir*k)%n + n) % n
		r := &m.rows[m.visible[i]]
		if len(m.findingsAt(r.sess, r.seq)) > 0 {
			return i, counts, nil
		}
	}
	return -1, counts, nil
}

// autoLint computes the findings of session sess for a detail pane: when
// they are not known yet, only if the session is small enough to check
// without the user noticing. It returns nil when they are not known.
func (m *Model) autoLint(sess int, src Source) (*sessionLint, error) {
	if sess < 0 || sess >= len(m.Sessions) {
		return nil, nil
	}
	if m.lintOf(sess) == nil && m.Sessions[sess].Messages > autoLintMax {
		return nil, nil
	}
	return m.ensureLint(sess, src)
}

// detailLint is what the detail pane says of message idx's findings: the
// findings, nothing when it has none, or that its session is too big to
// be checked on the way.
func (m *Model) detailLint(idx int, src Source) ([]Line, error) {
	r := &m.rows[idx]
	l, err := m.autoLint(int(r.sess), src)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return []Line{notChecked(m.Sessions[r.sess].Messages)}, nil
	}
	return findingLines(findingsOf(l.findings, r.seq)), nil
}

// sessionDetailLint is what the session detail says of session sess's
// findings.
func (m *Model) sessionDetailLint(sess int, src Source) ([]Line, error) {
	l, err := m.autoLint(sess, src)
	if err != nil {
		return nil, err
	}
	return sessionLintLines(l, m.Sessions[sess].Messages), nil
}

func notChecked(messages int) Line {
	return Line{{Label, "lint: "}, {Plain, fmt.Sprintf("not checked yet (%s messages); L checks the sessions in view", count(messages))}}
}

// findingText is a finding as the detail pane and show --lint print it:
// "error: answers id 9, which the client never sent [response-unknown-id]",
// with "· see s1 #4" for the other message involved.
func findingText(f lint.Finding) string {
	s := fmt.Sprintf("%s: %s [%s]", f.Severity, f.Message, f.Rule)
	if f.Related != 0 {
		s += fmt.Sprintf(" · see %s #%d", f.Session, f.Related)
	}
	return s
}

// findingLines are a message's findings in the detail pane, one line
// each, coloured by severity.
func findingLines(fs []lint.Finding) []Line {
	out := make([]Line, 0, len(fs))
	for _, f := range fs {
		out = append(out, Line{{Label, "lint: "}, {severityClass(f.Severity), findingText(f)}})
	}
	return out
}

func severityClass(s lint.Severity) Class {
	switch s {
	case lint.Error:
		return Bad
	case lint.Warning:
		return Warn
	}
	return Plain
}

// sessionLintLines sum up a session's findings for the session detail: a
// count per severity, then the findings about the session as a whole. l
// nil means the session has not been checked (it is too big to check on
// the way: L does it).
func sessionLintLines(l *sessionLint, messages int) []Line {
	if l == nil {
		return []Line{notChecked(messages)}
	}
	var counts [3]int
	countFindings(&counts, l.findings)
	sum := countsText(counts)
	switch {
	case !l.final:
		sum += " so far; unanswered requests are judged at the session's end"
	case !l.ended:
		sum += "; the session has no end, so no request is judged unanswered"
	}
	out := []Line{{{Label, "lint: "}, {Plain, sum}}}
	return append(out, findingLines(findingsOf(l.findings, 0))...)
}

func countFindings(counts *[3]int, fs []lint.Finding) {
	for _, f := range fs {
		counts[f.Severity]++
	}
}

// countsText says how many findings of each severity: "2 errors · 1
// warning · 0 info".
func countsText(counts [3]int) string {
	return countsNoun(counts[lint.Error], "error") + " · " + countsNoun(counts[lint.Warning], "warning") + " · " + count(counts[lint.Info]) + " info"
}
