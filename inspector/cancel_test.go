package inspector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// cancelSession has requests cancelled in each way a recording shows:
// never answered (1, 2); answered anyway (3-5), with a string id that a
// cancel of the integer 1 must not reach; answered before the cancel came
// (6-8); a server request the server cancels (9, 10), of an id the client
// also used; a cancel naming nothing sent (11); an id written otherwise
// (12, 13); a request in a batch (14, 15); a cancel in a batch (16, 17).
var cancelSession = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`},
	{store.C2S, 100 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timeout"}}`},
	{store.C2S, 200 * time.Millisecond, `{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"slow"}}`},
	{store.C2S, 250 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}`},
	{store.S2C, 260 * time.Millisecond, `{"jsonrpc":"2.0","id":"1","result":{"content":[]}}`},
	{store.C2S, 300 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
	{store.S2C, 301 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	{store.C2S, 302 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`},
	{store.S2C, 400 * time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`},
	{store.S2C, 410 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
	{store.C2S, 500 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`},
	{store.C2S, 600 * time.Millisecond, `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
	{store.C2S, 610 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3e0}}`},
	{store.C2S, 700 * time.Millisecond, `[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`},
	{store.C2S, 720 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`},
	{store.C2S, 800 * time.Millisecond, `{"jsonrpc":"2.0","id":6,"method":"ping"}`},
	{store.C2S, 830 * time.Millisecond, `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`},
}

// linkText is what a row says of its cancel links, its elements' too.
func linkText(l *CancelLink) string {
	if l == nil {
		return "-"
	}
	return fmt.Sprintf("#%d after %v answer %d", l.Seq, l.After, l.Answer)
}

func TestModel_CancelLinks(t *testing.T) {
	for source, path := range cassetteAndExport(t, cancelSession) {
		t.Run(source, func(t *testing.T) {
			m, _ := openModel(t, path)
			got := map[uint64]string{}
			for i := range m.Len() {
				r, _ := m.ByIndex(i)
				links := []string{linkText(r.Cancel)}
				for _, e := range r.Batch {
					links = append(links, linkText(e.Cancel))
				}
				got[r.Seq] = fmt.Sprintf("%s | %s | pairs %v", r.name(), strings.Join(links, ", "), pairSeqs(m, r))
			}
			want := map[uint64]string{
				1:  "tools/call slow [cancelled] | #2 after 100ms answer 0 | pairs [2]",
				2:  "notifications/cancelled [cancels #1] | #1 after 100ms answer 0 | pairs [1]",
				3:  "tools/call slow [cancelled] | #4 after 50ms answer 5 | pairs [5 4]",
				4:  "notifications/cancelled [cancels #3] | #3 after 50ms answer 5 | pairs [3]",
				5:  "tools/call slow | - | pairs [3]",
				6:  "ping [cancelled] | #8 after 2ms answer 7 | pairs [7 8]",
				7:  "ping | - | pairs [6]",
				8:  "notifications/cancelled [cancels #6] | #6 after 2ms answer 7 | pairs [6]",
				9:  "sampling/createMessage [cancelled] | #10 after 10ms answer 0 | pairs [10]",
				10: "notifications/cancelled [cancels #9] | #9 after 10ms answer 0 | pairs [9]",
				11: "notifications/cancelled | - | pairs []",
				12: "ping [cancelled] | #13 after 10ms answer 0 | pairs [13]",
				13: "notifications/cancelled [cancels #12] | #12 after 10ms answer 0 | pairs [12]",
				14: "2 msgs: ping [cancelled], tools/list | -, #15 after 20ms answer 0, - | pairs [15]",
				15: "notifications/cancelled [cancels #14] | #14 after 20ms answer 0 | pairs [14]",
				16: "ping [cancelled] | #17 after 30ms answer 0 | pairs [17]",
				17: "2 msgs: notifications/cancelled [cancels #16], notifications/initialized | -, #16 after 30ms answer 0, - | pairs [16]",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("names, links and pairs by seq (-want +got):\n%s", diff)
			}
		})
	}
}

// The detail pane says, under the heading, that a request was cancelled
// and whether its answer came all the same, and of a cancel which
// request it names; the other message is shown below.
func TestDetail_Cancel(t *testing.T) {
	m, src := openModel(t, writeCassette(t, cancelSession))
	tests := []struct {
		seq  int
		want []string
	}{
		{1, []string{"paired cancel s1 #2 below · p jumps to it", "cancelled by s1 #2, 100ms after · no answer came", "paired cancel: s1 #2"}},
		{2, []string{"paired request s1 #1 below · p jumps to it", "cancels s1 #1, sent 100ms before · no answer came", "paired request: s1 #1"}},
		{3, []string{"paired with s1 #5, s1 #4 below", "cancelled by s1 #4, 50.0ms after · answered anyway by s1 #5", "paired response: s1 #5", "paired cancel: s1 #4"}},
		{4, []string{"cancels s1 #3, sent 50.0ms before · answered anyway by s1 #5"}},
		{8, []string{"cancels s1 #6, sent 2.0ms before · its answer s1 #7 came first (they crossed)"}},
		{14, []string{"paired cancel s1 #15 below", "1. request ping · id 4 · no answer · cancelled by s1 #15"}},
		{17, []string{"paired request s1 #16 below", "1. notification notifications/cancelled · cancels s1 #16"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.seq), func(t *testing.T) {
			r := mustRow(t, m, tt.seq-1)
			msg, err := src.Message(r.Ref)
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for _, l := range Detail(r, msg, m.paired(r, src), false, nil) {
				text.WriteString(l.String() + "\n")
			}
			for _, w := range tt.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("detail lacks %q:\n%s", w, text.String())
				}
			}
		})
	}
}

// p goes from a cancel to the request it names, and from the request to
// its answer, then its cancel, in turn.
func TestView_CancelJump(t *testing.T) {
	m, src := openModel(t, writeCassette(t, cancelSession))
	h := startApp(t, m, src, Options{}, 120, 40)
	h.waitFor(wait, []string{"[cancels #3]"})
	steps := []struct {
		step keyStep
		seq  uint64
	}{
		{keyStep{keys: "jjj", want: []string{"s1 #4  →  notification"}}, 4},
		{keyStep{keys: "p", want: []string{"s1 #3  →  request"}}, 3},
		{keyStep{keys: "p", want: []string{"pair 1 of 2", "s1 #5  ←  response"}}, 5},
		{keyStep{keys: "p", want: []string{"s1 #3  →  request"}}, 3},
		{keyStep{keys: "p", want: []string{"pair 2 of 2", "s1 #4  →  notification"}}, 4},
	}
	for _, st := range steps {
		h.play(wait, []keyStep{st.step})
		h.waitSelected(wait, st.seq)
	}
}

// show marks the lines as the table's rows: a cancelled request, and the
// request a cancel names.
func TestModel_CancelText(t *testing.T) {
	lines := textLines(t, cancelSession)
	for seq, want := range map[int]string{3: " tools/call slow [cancelled]", 4: " notifications/cancelled [cancels #3]"} {
		if line := lines[seq-1]; !strings.HasSuffix(line, want) {
			t.Errorf("line %q\nwant it to end %q", line, want)
		}
	}
}
