package store_test

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcptape/mcptape/store"
	bolt "go.etcd.io/bbolt"
)

// Amend stores a message again with the metadata learnt after it went on,
// whether the first one is still waiting for its commit or was committed
// already, and keeps everything else of it: seq, direction, time, frame,
// the seqs around it; Observe sees it once.
func TestSession_Amend(t *testing.T) {
	for _, tc := range []struct {
		name        string
		commitFirst bool
	}{
		{"same commit", false},
		{"after its commit", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			observed := 0
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true,
				Observe: func(_ *store.SessionInfo, m *store.Message, _ *store.Summary) bool {
					if m.Seq == 2 {
						observed++ // the commit goroutine only
					}
					return false
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			s, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP})
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Date(2026, 11, 27, 8, 0, 0, 42, time.UTC)
			req := &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: "post-body", StreamID: 2,
				RequestHeader: http.Header{"Content-Type": {"application/json"}}}
			s.Append(store.C2S, t0, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
			note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			seq := s.Append(store.C2S, t0.Add(1), note, req)
			if tc.commitFirst {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			answered := *req
			answered.Status = http.StatusAccepted
			answered.ResponseHeader = http.Header{"Mcp-Session-Id": {"abc"}}
			s.Amend(store.Message{Seq: seq, Dir: store.C2S, Time: t0.Add(1), Frame: note, HTTP: &answered, Note: "answered without a message"})
			s.Append(store.S2C, t0.Add(2), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil)
			if err := s.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
				t.Fatal(err)
			}

			tape, err := store.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			msgs := tape.Sessions[0].Messages
			if len(msgs) != 3 {
				t.Fatalf("%d messages stored, want 3", len(msgs))
			}
			got := msgs[1]
			if got.Seq != 2 || got.Dir != store.C2S || !got.Time.Equal(t0.Add(1)) || string(got.Frame) != string(note) {
				t.Errorf("amended message: seq %d dir %v time %v frame %s", got.Seq, got.Dir, got.Time, got.Frame)
			}
			if diff := cmp.Diff(&answered, got.HTTP); diff != "" {
				t.Errorf("HTTP metadata (-want +got):\n%s", diff)
			}
			if got.Note != "answered without a message" {
				t.Errorf("note = %q", got.Note)
			}
			if msgs[2].Seq != 3 || msgs[2].Dir != store.S2C {
				t.Errorf("the message after it: seq %d dir %v", msgs[2].Seq, msgs[2].Dir)
			}
			if observed != 1 {
				t.Errorf("Observe saw seq 2 %d times, want once", observed)
			}
		})
	}
}

// amendedSince reads the amendment log past mark: "session:seq" per note,
// and the mark to pass next.
func amendedSince(t *testing.T, path string, mark uint64) ([]string, uint64) {
	t.Helper()
	var got []string
	err := store.View(path, func(r *store.Reader) error {
		var err error
		mark, err = r.Amended(mark, func(session string, seq uint64) error {
			got = append(got, fmt.Sprintf("%s:%d", session, seq))
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatalf("reading the amendment log of %s: %v", path, err)
	}
	return got, mark
}

// TestReader_Amended: a follower that read a message before its
// amendment was committed learns of it from the log, past the mark it
// kept; one amended in the commit that first stores it is not logged (no
// one can have read the first version), nor twice when amended twice in
// one commit; what was reported once is not reported again.
func TestReader_Amended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s, other := newHTTPSession(t, w), newHTTPSession(t, w)
	flush := func() {
		t.Helper()
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	post := &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: store.StreamPostBody}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	t0 := time.Now()
	amend := func(s *store.Session, seq uint64, status int) {
		answered := *post
		answered.Status = status
		s.Amend(store.Message{Seq: seq, Dir: store.C2S, Time: t0, Frame: note, HTTP: &answered})
	}

	s.Append(store.C2S, t0, note, post)     // s1:1
	other.Append(store.C2S, t0, note, post) // s2:1
	flush()
	var mark uint64
	if err := store.View(path, func(r *store.Reader) error { mark = r.AmendMark(); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := amendedSince(t, path, mark); len(got) != 0 {
		t.Fatalf("before any amendment the log holds %v", got)
	}

	amend(s, 1, 202)     // its message was committed before: logged
	amend(other, 1, 404) // in another session
	seq := s.Append(store.C2S, t0, note, post)
	amend(s, seq, 202) // in the commit that stores it: not logged
	flush()
	got, mark2 := amendedSince(t, path, mark)
	if d := cmp.Diff([]string{"s1:1", "s2:1"}, got); d != "" {
		t.Errorf("amended since the first commit (-want +got):\n%s", d)
	}
	if again, m := amendedSince(t, path, mark2); len(again) != 0 || m != mark2 {
		t.Errorf("past the mark it returned, the log gives %v and mark %d, want nothing and %d", again, m, mark2)
	}

	amend(s, 2, 404) // twice in one commit, committed before: once
	amend(s, 2, 404)
	flush()
	if got, _ := amendedSince(t, path, mark2); !cmp.Equal(got, []string{"s1:2"}) {
		t.Errorf("amended twice in one commit: the log gives %v, want [s1:2]", got)
	}
	msg := readMessage(t, path, "s1", 2)
	if msg.HTTP == nil || msg.HTTP.Status != 404 {
		t.Errorf("s1:2 stored with HTTP %+v, want status 404", msg.HTTP)
	}
}

func newHTTPSession(t *testing.T, w *store.Writer) *store.Session {
	t.Helper()
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readMessage(t *testing.T, path, session string, seq uint64) *store.Message {
	t.Helper()
	var m *store.Message
	err := store.View(path, func(r *store.Reader) error {
		var err error
		m, err = r.Message(session, seq)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReader_AmendedOlderFile: a cassette an older mcptape made, with no
// amendment log, reads as one with an empty log, and the first newer
// writer adds the log and notes its amendments in it. (The log came
// within format version 1: see store/amended.go.)
func TestReader_AmendedOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s := newHTTPSession(t, w)
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post := &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: store.StreamPostBody}
	s.Append(store.C2S, time.Now(), note, post)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("amended")) }); err != nil {
		t.Fatalf("making the file an older mcptape's: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var mark uint64
	if err := store.View(path, func(r *store.Reader) error { mark = r.AmendMark(); return nil }); err != nil {
		t.Fatalf("reading an older cassette: %v", err)
	}
	if got, m := amendedSince(t, path, mark); mark != 0 || len(got) != 0 || m != 0 {
		t.Errorf("an older cassette: mark %d, log %v (next mark %d); want an empty log", mark, got, m)
	}

	w2 := newWriter(t, path)
	s2 := newHTTPSession(t, w2)
	seq := s2.Append(store.C2S, time.Now(), note, post)
	if err := w2.Flush(); err != nil {
		t.Fatal(err)
	}
	answered := *post
	answered.Status = 202
	s2.Amend(store.Message{Seq: seq, Dir: store.C2S, Time: time.Now(), Frame: note, HTTP: &answered})
	if err := w2.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, _ := amendedSince(t, path, mark); !cmp.Equal(got, []string{"s2:1"}) {
		t.Errorf("a newer writer's amendment on an older cassette: the log gives %v, want [s2:1]", got)
	}
}

// AmendMeta puts the metadata and note learnt after a message went on
// into its stored record, whether the message waits for the same commit
// or was committed before, and keeps everything else of it: direction,
// time, frame (inline, or in chunks) and summary. It is logged for
// followers as Amend is, only when its message was committed before.
func TestSession_AmendMeta(t *testing.T) {
	short := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	long := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"%s"}}`, strings.Repeat("x", 3<<20))
	for _, tc := range []struct {
		name        string
		frame       []byte
		commitFirst bool
	}{
		{"same commit", short, false},
		{"after its commit", short, true},
		{"chunked, same commit", long, false},
		{"chunked, after its commit", long, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			observed := 0
			// The writer's own first commit (of seq 1) waits in Rewrite
			// until seq 2 is appended, and its next is an hour later:
			// the test's Flush calls alone decide what goes in one commit.
			taken, release := make(chan struct{}), make(chan struct{})
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true, CommitInterval: time.Hour,
				Rewrite: func(m *store.Message) *store.Message {
					if m.Seq == 1 {
						close(taken)
						<-release
					}
					return m
				},
				Observe: func(_ *store.SessionInfo, m *store.Message, _ *store.Summary) bool {
					if m.Seq == 2 {
						observed++ // on one commit goroutine at a time
					}
					return false
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			s := newHTTPSession(t, w)
			t0 := time.Date(2026, 11, 28, 8, 0, 0, 42, time.UTC)
			post := &store.HTTPMeta{Method: "POST", Path: "/message?sessionId=1", Stream: store.StreamPostBody}
			s.Append(store.S2C, t0, []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), nil)
			<-taken
			seq := s.Append(store.C2S, t0.Add(1), tc.frame, post)
			close(release)
			if tc.commitFirst {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			answered := *post
			answered.Status = http.StatusAccepted
			answered.ResponseHeader = http.Header{"Content-Length": {"8"}}
			s.AmendMeta(seq, &answered, "accepted")
			s.Append(store.S2C, t0.Add(2), []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`), nil)
			if err := s.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil { // it gives the file up
				t.Fatal(err)
			}

			got := readMessage(t, path, s.ID(), seq)
			if got.Dir != store.C2S || !got.Time.Equal(t0.Add(1)) || !bytes.Equal(got.Frame, tc.frame) {
				t.Errorf("amended message: dir %v time %v, %d frame bytes equal to those appended: %v", got.Dir, got.Time, len(got.Frame), bytes.Equal(got.Frame, tc.frame))
			}
			if diff := cmp.Diff(&answered, got.HTTP); diff != "" {
				t.Errorf("HTTP metadata (-want +got):\n%s", diff)
			}
			if got.Note != "accepted" {
				t.Errorf("note = %q, want %q", got.Note, "accepted")
			}
			var sums []store.Summary
			err = store.View(path, func(r *store.Reader) error {
				return r.Summaries(s.ID(), 1, nil, func(sum *store.Summary) error {
					sums = append(sums, *sum)
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) != 3 || sums[1].Seq != seq || sums[1].Size != len(tc.frame) || sums[1].Method != "notifications/initialized" && sums[1].Method != "notifications/message" {
				t.Errorf("summaries after the amendment: %+v", sums)
			}
			if observed != 1 {
				t.Errorf("Observe saw seq 2 %d times, want once", observed)
			}
			logged, _ := amendedSince(t, path, 0) // a new cassette's log starts empty
			want := []string(nil)
			if tc.commitFirst {
				want = []string{s.ID() + ":2"}
			}
			if !cmp.Equal(logged, want, cmpopts.EquateEmpty()) {
				t.Errorf("the amendment log gives %v, want %v", logged, want)
			}
		})
	}
}

// An AmendMeta of a seq the cassette does not hold (its message went
// with a cassette removed while recording) is dropped, and said so: the
// commit, and the messages in it, go on.
func TestSession_AmendMetaOfNoMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	var log bytes.Buffer
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := newHTTPSession(t, w)
	s.AmendMeta(7, &store.HTTPMeta{Method: "POST", Status: http.StatusAccepted}, "")
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatalf("a commit with an amendment of no message: %v", err)
	}
	if m := readMessage(t, path, s.ID(), 1); m.HTTP != nil {
		t.Errorf("seq 1 stored with HTTP %+v, want none", m.HTTP)
	}
	if want := "no message " + s.ID() + " seq 7 to amend"; !strings.Contains(log.String(), want) {
		t.Errorf("the writer's log says %q, want it to hold %q", log.String(), want)
	}
}
