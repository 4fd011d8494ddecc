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
//
// The sessions are checked as the sessions of one lint.Cassette, so that
// the findings are mcpspy lint's: a 2026-07-28 retry that no
// input_required result of its own session answers (a retry sent on
// another HTTP connection than its call) is judged against the other
// sessions'. Before such a retry is judged, every session whose summaries
// show an input_required result is checked too (settleAsks), and it is
// judged again whenever more of them arrive in follow mode.

// sessionLint is what package lint found in one session.
type sessionLint struct {
	// findings are in seq order, the session's own (seq 0) first: own,
	// and the judgements of its retries whose ask is in another session.
	findings []lint.Finding
	// own are the findings of the session's checker.
	own []lint.Finding
	// retries counts the retries the cassette judges (lint.Cassette's
	// Retries); judged is Model.askRows when they were last judged, -1
	// when they have not been since the session was checked.
	retries, judged int
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
// date with the messages follow mode added since (checkSession), and
// judges its retries that answer another session's input_required
// result against every such result the cassette holds so far.
func (m *Model) ensureLint(sess int, src Source) (*sessionLint, error) {
	l, err := m.checkSession(sess, src)
	if err != nil {
		return nil, err
	}
	if l.retries > 0 && l.judged != m.askRows {
		if err := m.settleAsks(src); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// checkSession computes the findings of session sess on its own, or
// brings them up to date with the messages follow mode added since: a
// session still being recorded feeds its kept checker; one that has ended
// since it was checked is checked again whole, because only then are its
// unanswered requests known. Outside follow mode a session with no end
// (its recorder was killed) is checked whole as it stands, as mcpspy lint
// checks it. Its retries that another session may answer are left for
// settleAsks to judge.
func (m *Model) checkSession(sess int, src Source) (*sessionLint, error) {
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
	if m.cassette == nil {
		m.cassette = lint.NewCassette(lint.Options{})
	}
	if l == nil || l.checker == nil || final {
		l = &sessionLint{checker: m.cassette.Checker(s.Info), final: final, ended: ended}
	}
	if s.LastSeq > l.fed {
		err := src.Messages(s.Info.ID, l.fed+1, s.LastSeq, func(msg *store.Message) error {
			l.checker.Add(msg)
			return nil
		})
		if err != nil {
			// The checker took part of the messages: start afresh next
			// time, and give the cassette all of them again.
			if sess < len(m.lints) {
				m.lints[sess] = nil
			}
			m.asksFed = -1
			return nil, fmt.Errorf("lint %s: %w", s.Info.ID, err)
		}
		l.fed = s.LastSeq
	}
	if final {
		l.own, l.checker = l.checker.Finish(), nil
	} else {
		l.own = l.checker.Findings()
	}
	l.findings, l.judged = l.own, -1
	if l.retries = m.cassette.Retries(s.Info.ID); l.retries == 0 {
		l.judged = m.askRows // nothing to judge: up to date whatever comes
	}
	for len(m.lints) <= sess {
		m.lints = append(m.lints, nil)
	}
	m.lints[sess] = l
	return l, nil
}

// settleAsks checks every session whose summaries show an input_required
// result (or a batch, which may hold one), up to its last message, so
// that the cassette knows every ask; then judges again the retries of
// every checked session judged before the latest of them arrived.
func (m *Model) settleAsks(src Source) error {
	if m.asksFed != m.askRows {
		for s := range m.Sessions {
			if m.mayAsk(s) {
				if _, err := m.checkSession(s, src); err != nil {
					return err
				}
			}
		}
		m.asksFed = m.askRows
	}
	for s, l := range m.lints {
		if l == nil || l.retries == 0 || l.judged == m.askRows {
			continue
		}
		l.findings = slices.Clip(l.own)
		if cross := m.cassette.Findings(m.Sessions[s].Info.ID); len(cross) > 0 {
			// As lint.Tape merges them: the checker's first, by seq.
			l.findings = append(l.findings, cross...)
			slices.SortStableFunc(l.findings, func(a, b lint.Finding) int { return cmp.Compare(a.Seq, b.Seq) })
		}
		l.judged = m.askRows
	}
	return nil
}

// mayAsk says whether session sess's summaries show a message that may
// hold an input_required result.
func (m *Model) mayAsk(sess int) bool {
	return sess < len(m.asking) && m.asking[sess]
}

// lintScope computes the findings of every session in scope.
func (m *Model) lintScope(src Source) error {
	for s := range m.Sessions {
		if !m.sessionInScope(s) {
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
		if l == nil || !m.sessionInScope(s) {
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
	return Line{{Label, "lint: "}, {Plain, fmt.Sprintf("not checked yet (%s); L checks the sessions in view", countsNoun(messages, "message"))}}
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
