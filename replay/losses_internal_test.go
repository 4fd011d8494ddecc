package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncbuf"
)

// A session that keeps losing messages for one reason (a client that
// stopped reading its legacy stream loses one per message past the
// bound) gets one line on stderr at once, then at most one a second
// saying how many more; the rest is said when the session ends. Every
// message is counted in the report as it goes.
func TestLosses_SaidOnceASecond(t *testing.T) {
	log := &syncbuf.Buffer{}
	s := &Server{opts: Options{Log: log}}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s.http.now = func() time.Time { return now }
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	lose := func(session string, msgs ...[]byte) { s.countUndelivered(session, "SSE stream", whyNotRead, msgs) }
	lines := func() []string { return strings.Split(strings.TrimSpace(log.String()), "\n") }

	lose("a", note)
	for range 500 {
		lose("a", note)
	}
	lose("b", answer) // another session: its own line
	now = now.Add(999 * time.Millisecond)
	lose("a", answer)
	want := []string{
		"mcpmock: session a: 1 message for its SSE stream never reached the client (notifications/tools/list_changed): " + whyNotRead,
		"mcpmock: session b: 1 message for its SSE stream never reached the client ((response)): " + whyNotRead,
	}
	if got := lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("within the first second:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	now = now.Add(time.Millisecond)
	lose("a", note)
	want = append(want, "mcpmock: session a: 502 more messages for its SSE stream never reached the client (notifications/tools/list_changed, (response)): "+whyNotRead)
	lose("a", note, note)
	s.sayHeldLosses("a") // the session ends
	want = append(want, "mcpmock: session a: 2 more messages for its SSE stream never reached the client (notifications/tools/list_changed): "+whyNotRead)
	s.sayHeldLosses("a")
	if got := lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var total int
	for _, u := range s.Report().Undelivered {
		total += u.Count
	}
	if total != 506 {
		t.Errorf("the report counts %d lost, want 506", total)
	}
}
