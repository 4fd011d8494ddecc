package inspector

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/mcptape/mcptape/store"
)

// whyHidden names what keeps a message out of the table: the sessions
// pane's selection, the filter, or a filter that passes it now but judged
// it before (follow mode).
func TestModel_WhyHidden(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession, sampleSession))
	tests := []struct {
		name   string
		filter string
		scope  int
		idx    int // s1 #1 is 0, s2 #1 is 13
		want   string
	}{
		{"shown", "", -1, 0, ""},
		{"another session selected", "", 1, 0, "its pair is in session s1, which the sessions pane does not show (select it, or all)"},
		{"the filter, with its session selected", "kind:response", 1, 13, "its pair is hidden by the filter"},
		{"the filter, all sessions shown", "kind:response", -1, 0, "its pair is hidden by the filter"},
		{"both: the sessions pane first", "kind:response", 1, 0, "which the sessions pane does not show"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.SetFilter(f, src); err != nil {
				t.Fatal(err)
			}
			if err := m.SetScope(tt.scope, src); err != nil {
				t.Fatal(err)
			}
			got := m.whyHidden(tt.idx, "its pair", src)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("whyHidden = %q, want %q", got, tt.want)
			}
		})
	}
}

// p from an answer that follow mode showed, to its request that the
// filter passed over when it arrived unanswered (slow: needs the
// latency), says the filter passes the request now and how to show it,
// not that the filter hides it.
func TestView_PairJudgedBeforeItsAnswer(t *testing.T) {
	path := writeCassette(t, sampleSession)
	start := time.Now()
	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Upstream: "live", Start: start})
	s.Append(store.C2S, start, []byte(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"slow"}}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m, src := openModel(t, path)
	h := startApp(t, m, src, Options{Follow: true}, 120, 40)
	h.waitFor(wait, []string{"14/14", "● follow"})
	h.play(wait, []keyStep{{keys: "f"}, {keys: "slow:>100ms"}, {key: keyEnter, want: []string{"2/14"}}})

	s.Append(store.S2C, start.Add(time.Second), []byte(`{"jsonrpc":"2.0","id":77,"result":{"content":[]}}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h.waitFor(wait, []string{"3/15"})
	h.key(tcell.KeyEnd)
	h.play(wait, []keyStep{{keys: "p", want: []string{"f Enter shows its pair: it passes the filter now"}}})
	h.play(wait, []keyStep{{keys: "f"}, {key: keyEnter, want: []string{"4/15"}}})
}
