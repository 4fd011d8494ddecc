package fallback

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// The status of a POST the client sent before the server first spoke,
// when the tap held its frame back, goes on its message: whether it came
// while the frame was held or after the server spoke and the frame was
// appended. Before, the tap gave the client no seq for a held frame, and
// found it by its time and frame: one whose status came after the server
// spoke (an initialize answered on the stream before its POST's 202 was
// read) was left without it.
func TestSessionTap_StatusOfHeldFrame(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spokeFirst bool
	}{
		{"while held", false},
		{"after the server spoke", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "new.db")
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tap := &sessionTap{src: &Source{w: w}, info: store.SessionInfo{Transport: store.TransportLegacySSE}}
			post := store.HTTPMeta{Method: http.MethodPost, Path: "/message?sessionId=1", Stream: store.StreamPostBody}
			sent := post
			seq := tap.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`), &sent)
			answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			if tc.spokeFirst {
				tap.Append(store.S2C, time.Now(), answer, &store.HTTPMeta{Method: http.MethodGet, Path: "/sse", Status: http.StatusOK})
			}
			answered := post
			answered.Status = http.StatusAccepted
			tap.AmendMeta(seq, &answered, "")
			if !tc.spokeFirst {
				tap.Append(store.S2C, time.Now(), answer, &store.HTTPMeta{Method: http.MethodGet, Path: "/sse", Status: http.StatusOK})
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			tape, err := store.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) != 2 {
				t.Fatalf("the cassette holds %+v, want one session of two messages", tape.Sessions)
			}
			if m := tape.Sessions[0].Messages[0]; m.HTTP == nil || m.HTTP.Status != http.StatusAccepted {
				t.Errorf("the POST's message is stored with HTTP %+v, want its 202", m.HTTP)
			}
		})
	}
}
