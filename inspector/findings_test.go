package inspector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// brokenSession breaks the protocol four ways: a call never answered
// (#4), progress that goes backwards (#6), an answer to an id nobody sent
// (#7) and an undeclared list_changed (#8). #1, #2, #3 and #5 are fine.
var brokenSession = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
	{store.S2C, 1 * time.Millisecond, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
	{store.C2S, 2 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{store.C2S, 3 * time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`},
	{store.S2C, 4 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`},
	{store.S2C, 5 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`},
	{store.S2C, 6 * time.Millisecond, `{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`},
	{store.S2C, 7 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
}

// noHandshake is a session that never says initialize: a finding about
// the session as a whole.
var noHandshake = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	{store.S2C, time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
}

func TestModel_LintFilter(t *testing.T) {
	m, src := openModel(t, writeCassette(t, brokenSession, noHandshake))
	if m.lints != nil {
		t.Fatalf("lint computed at open: %v", m.lints)
	}
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"any finding", "lint", []string{"s1:4", "s1:6", "s1:7", "s1:8"}},
		{"errors", "lint:error", []string{"s1:6", "s1:7"}},
		{"warning or above", "lint:warning", []string{"s1:4", "s1:6", "s1:7", "s1:8"}},
		{"rules", "lint:unanswered|progress-not-increasing", []string{"s1:4", "s1:6"}},
		{"a rule or a severity", "lint:error|unanswered", []string{"s1:4", "s1:6", "s1:7"}},
		{"none of info", "lint:info kind:notification", []string{"s1:6", "s1:8"}},
		{"negated", "!lint session:s1", []string{"s1:1", "s1:2", "s1:3", "s1:5"}},
		{"a session's own finding is about no message", "session:s2 lint", nil},
		{"quoted, it is text again", `"lint"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, filtered(t, m, src, tt.filter)); diff != "" {
				t.Errorf("filter %q (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
}

// Only what needs lint computes it, and only for the sessions in scope.
func TestModel_LintIsLazy(t *testing.T) {
	m, src := openModel(t, writeCassette(t, brokenSession, noHandshake))
	f, _ := ParseFilter("kind:request error tool:x")
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	if m.lintOf(0) != nil || m.lintOf(1) != nil {
		t.Fatal("a filter without lint computed lint")
	}
	if err := m.SetScope(1, src); err != nil {
		t.Fatal(err)
	}
	f, _ = ParseFilter("lint")
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	if m.lintOf(0) != nil || m.lintOf(1) == nil {
		t.Errorf("scoped to s2, lint computed for s1 %v, s2 %v", m.lintOf(0) != nil, m.lintOf(1) != nil)
	}
	if _, ok := m.findingMark(3); ok {
		t.Error("s1 #4 marked before s1 was checked")
	}
	if err := m.SetScope(-1, src); err != nil {
		t.Fatal(err)
	}
	if sev, ok := m.findingMark(3); !ok || sev.String() != "warning" {
		t.Errorf("s1 #4 after every session was checked: mark %v %v, want a warning", sev, ok)
	}
}

func TestDetail_Findings(t *testing.T) {
	m, src := openModel(t, writeCassette(t, brokenSession))
	tests := []struct {
		seq  uint64
		want []string // the lines after the heading and facts, up to the body
	}{
		{4, []string{"lint: warning: tools/call 1 (client) was never answered [unanswered]"}},
		{6, []string{"lint: error: progress 1 after 2 for token 1; it must increase [progress-not-increasing] · see s1 #4"}},
		{7, []string{"lint: error: answers id 9, which the client never sent [response-unknown-id]"}},
		{2, []string{"paired request s1 #1 below · p jumps to it"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.seq), func(t *testing.T) {
			idx := int(tt.seq - 1)
			r, _ := m.ByIndex(idx)
			msg, err := src.Message(r.Ref)
			if err != nil {
				t.Fatal(err)
			}
			var pairs []Paired
			if p, ok := m.ByIndex(r.Pair); ok {
				pairs = []Paired{{Row: p}}
			}
			lint, err := m.detailLint(idx, src)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range Detail(r, msg, pairs, false, lint)[2:] {
				if strings.HasPrefix(l.String(), "{") {
					break
				}
				got = append(got, l.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("s1 #%d (-want +got):\n%s", tt.seq, diff)
			}
		})
	}
}

func TestSessionDetail_Findings(t *testing.T) {
	// A session too big to check on the way says so until L checks it.
	pings := make([]frame, autoLintMax+1)
	for i := range pings {
		pings[i] = frame{store.C2S, time.Duration(i), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)}
	}
	m, src := openModel(t, writeCassette(t, brokenSession, noHandshake, pings))
	lintLines := func(sess int) []string {
		t.Helper()
		lines, err := m.sessionDetailLint(sess, src)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range lines {
			out = append(out, l.String())
		}
		return out
	}
	tests := []struct {
		name string
		sess int
		want []string
	}{
		{"counts per severity", 0, []string{"lint: 2 errors · 2 warnings · 0 info"}},
		{"the session's own findings", 1, []string{
			"lint: 0 errors · 1 warning · 0 info",
			"lint: warning: no initialize, server/discover or per-request protocol version: the client's first request is tools/list at #1 [no-handshake]",
		}},
		{"too big to check on the way", 2, []string{"lint: not checked yet (10,001 messages); L checks the sessions in view"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lintLines(tt.sess)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, _, err := m.NextFinding(0, 1, src); err != nil {
		t.Fatal(err)
	}
	if got := lintLines(2); len(got) != 1 || !strings.HasPrefix(got[0], "lint: 0 errors · 10,001 warnings") {
		// The pings have no answers: each one is unanswered.
		t.Errorf("after L: %q", got)
	}
}

// In follow mode a checked session that is still recording keeps its
// checker and checks only what arrives; its end brings the unanswered.
func TestModel_LintFollow(t *testing.T) {
	path := writeCassette(t, sampleSession)
	m, src := openModel(t, path)
	m.following = true
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	appendFrames := func(frames []frame) {
		t.Helper()
		for _, f := range frames {
			s.Append(f.dir, t0.Add(f.at), []byte(f.json), nil)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		poll(t, m, src)
	}
	findings := func() []string {
		t.Helper()
		var out []string
		l := m.lintOf(1)
		for _, f := range l.findings {
			out = append(out, fmt.Sprintf("%s@%d", f.Rule, f.Seq))
		}
		return out
	}
	appendFrames(brokenSession[:6])
	if _, err := m.MessageFindings(m.Len()-1, src); err != nil {
		t.Fatal(err)
	}
	checker := m.lintOf(1).checker
	if diff := cmp.Diff([]string{"progress-not-increasing@6"}, findings()); diff != "" {
		t.Errorf("recording, 6 messages (-want +got):\n%s", diff)
	}
	appendFrames(brokenSession[6:])
	if got := m.lintOf(1); got.checker != checker || got.fed != 8 {
		t.Errorf("the new messages were not fed to the kept checker (fed %d)", got.fed)
	}
	if diff := cmp.Diff([]string{"progress-not-increasing@6", "response-unknown-id@7", "undeclared-capability@8"}, findings()); diff != "" {
		t.Errorf("recording, 8 messages (-want +got):\n%s", diff)
	}
	if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	poll(t, m, src)
	if diff := cmp.Diff([]string{"unanswered@4", "progress-not-increasing@6", "response-unknown-id@7", "undeclared-capability@8"}, findings()); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
	if l := m.lintOf(1); !l.ended || l.checker != nil {
		t.Errorf("ended session: ended %v, checker kept %v", l.ended, l.checker != nil)
	}
	if m.lintOf(0) != nil {
		t.Error("follow checked s1, which nothing asked about")
	}
}

// poll applies what the cassette holds beyond the model.
func poll(t *testing.T, m *Model, src Source) {
	t.Helper()
	b, err := src.Poll(m.After())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(b, src); err != nil {
		t.Fatal(err)
	}
}

// The session detail's summary says whether the unanswered requests have
// been judged: not while the session is recorded, never when it has no end.
func TestSessionLintLines(t *testing.T) {
	tests := []struct {
		name string
		l    *sessionLint
		want string
	}{
		{"still recording", &sessionLint{}, "lint: 0 errors · 0 warnings · 0 info so far; unanswered requests are judged at the session's end"},
		{"no end, nothing to come", &sessionLint{final: true}, "lint: 0 errors · 0 warnings · 0 info; the session has no end, so no request is judged unanswered"},
		{"ended", &sessionLint{final: true, ended: true}, "lint: 0 errors · 0 warnings · 0 info"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessionLintLines(tt.l, 1)[0].String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
