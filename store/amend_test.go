package store_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
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
