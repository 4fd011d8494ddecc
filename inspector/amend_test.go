package inspector

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/store"
)

// httpLive is a Streamable HTTP session being recorded into a new
// cassette, as mcpspy records one: each client message is a POST whose
// status comes later, by Amend, when its answer carried no message.
type httpLive struct {
	path string
	w    *store.Writer
	s    *store.Session
}

func newHTTPLive(t *testing.T) *httpLive {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live.db")
	w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportHTTP, Upstream: "http://127.0.0.1:1/mcp", Start: t0})
	return &httpLive{path: path, w: w, s: s}
}

// post records a client message as the recorder does before its answer.
func (h *httpLive) post(json string) uint64 {
	return h.s.Append(store.C2S, time.Now(), []byte(json), &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: store.StreamPostBody})
}

// answer amends message seq with the status of an answer without one.
func (h *httpLive) answer(t *testing.T, seq uint64, status int, note string) {
	t.Helper()
	var m *store.Message
	err := store.View(h.path, func(r *store.Reader) error {
		var err error
		m, err = r.Message(h.s.ID(), seq)
		return err
	})
	if err != nil {
		t.Fatalf("reading seq %d to amend it: %v", seq, err)
	}
	m.HTTP.Status, m.Note = status, note
	h.s.Amend(*m)
}

func (h *httpLive) flush(t *testing.T) {
	t.Helper()
	if err := h.w.Flush(); err != nil {
		t.Fatal(err)
	}
}

const (
	notifyJSON = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	callJSON   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`
	pingJSON   = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
)

// threePosts records a notification, a call and a ping, each waiting for
// its status, and opens the cassette with filter applied. With refused,
// a refusal's body comes first, as seq 1: a line a follower prints at
// once, whatever the filter on the status.
func threePosts(t *testing.T, filter string, refused bool) (*httpLive, *Model, Source) {
	t.Helper()
	h := newHTTPLive(t)
	if refused {
		h.s.Append(store.S2C, time.Now(), []byte("session not found\n"), &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: http.StatusNotFound, Stream: store.StreamJSON})
	}
	h.post(notifyJSON)
	h.post(callJSON)
	h.post(pingJSON)
	h.flush(t)
	m, src := openModel(t, h.path)
	f, err := ParseFilter(filter)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	return h, m, src
}

// TestModel_ApplyAmended: a follower that read a client's POST before the
// recorder stored the status of its answer (a 202, a bare 404) learns of
// the amendment at its next poll, and the model judges the message again:
// a filter on the status or on what lint makes of it shows or hides it in
// place, above rows already shown; what was reported once is not again.
func TestModel_ApplyAmended(t *testing.T) {
	for _, tc := range []struct {
		name    string
		filter  string
		answers map[uint64]int // seq → status amended after the first commit
		before  []string       // the messages shown before the amendments
		after   []string       // and after
	}{
		{"refusal under status:404", "status:404", map[uint64]int{2: 404}, nil, []string{"s1:2"}},
		{"202 under status:2xx", "status:2xx", map[uint64]int{1: 202}, nil, []string{"s1:1"}},
		{"shown above a later match", "status:202", map[uint64]int{1: 202, 3: 202}, nil, []string{"s1:1", "s1:3"}},
		{"hidden once answered", "!status:4xx kind:request", map[uint64]int{2: 404}, []string{"s1:2", "s1:3"}, []string{"s1:3"}},
		{"lint reads the status", "lint:http-status", map[uint64]int{2: 503}, nil, []string{"s1:2"}},
		{"no filter", "", map[uint64]int{1: 202, 2: 404}, []string{"s1:1", "s1:2", "s1:3"}, []string{"s1:1", "s1:2", "s1:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, m, src := threePosts(t, tc.filter, false)
			m.following = true
			if d := cmp.Diff(tc.before, visibleSeqs(m)); d != "" {
				t.Errorf("before the amendments (-want +got):\n%s", d)
			}
			for seq, status := range tc.answers {
				h.answer(t, seq, status, "")
			}
			h.flush(t)

			b, err := src.Poll(m.After())
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Amended) != len(tc.answers) || len(b.Msgs) != 0 {
				t.Errorf("the poll after the amendments found %d amended and %d new messages, want %d and 0", len(b.Amended), len(b.Msgs), len(tc.answers))
			}
			if err := m.Apply(b, src); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.after, visibleSeqs(m)); d != "" {
				t.Errorf("after the amendments (-want +got):\n%s", d)
			}
			if m.Len() != 3 || m.Sessions[0].Messages != 3 {
				t.Errorf("the model holds %d rows, the session counts %d messages; want 3: an amendment is no new message", m.Len(), m.Sessions[0].Messages)
			}
			if b, err := src.Poll(m.After()); err != nil || len(b.Amended) != 0 {
				t.Errorf("the poll after that found %d amended again (err %v), want none", len(b.Amended), err)
			}
		})
	}
}

// An amendment to a message the follower has not read yet is read with
// the message, as it stands, and not reported as amended besides.
func TestSource_PollAmendedUnread(t *testing.T) {
	h := newHTTPLive(t)
	h.post(pingJSON)
	h.flush(t)
	m, src := openModel(t, h.path)
	seq := h.post(notifyJSON)
	h.flush(t)
	h.answer(t, seq, http.StatusAccepted, "")
	h.flush(t)
	b, err := src.Poll(m.After())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Amended) != 0 || len(b.Msgs) != 1 {
		t.Fatalf("poll: %d amended, %d new; want 0 and 1", len(b.Amended), len(b.Msgs))
	}
	if err := m.Apply(b, src); err != nil {
		t.Fatal(err)
	}
	f, _ := ParseFilter("status:202")
	if err := m.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	if got := visibleSeqs(m); !cmp.Equal(got, []string{fmt.Sprintf("s1:%d", seq)}) {
		t.Errorf("status:202 shows %v, want [s1:%d]", got, seq)
	}
}

// TestView_FollowAmended: inspect --follow shows an amended message as it
// stands now: the detail pane of the selected one gains its status, and
// lint's finding about it, and a row the filter hides once answered
// leaves the table without moving the selection off its message.
func TestView_FollowAmended(t *testing.T) {
	h, m, src := threePosts(t, "!status:202", false)
	ui := startApp(t, m, src, Options{Follow: true}, 120, 40)
	ui.waitFor(wait, []string{"3/3", "● follow"})
	ui.keys("j")
	ui.waitFor(wait, []string{"s1 #2  →", "http: POST /mcp  stream post-body"})

	h.answer(t, 1, http.StatusAccepted, "")
	h.answer(t, 2, http.StatusNotFound, "refused without a message: session not found")
	h.flush(t)
	ui.waitFor(wait, []string{"2/3", "http: POST /mcp → 404  stream post-body", "session not found", "[http-status]"})
	if r := ui.selected(); r.Seq != 2 {
		t.Errorf("selection moved to %s #%d, want s1 #2", r.Session, r.Seq)
	}
}
