package recorder

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/mcptape/mcptape/store"
)

// The 202 a legacy server gives a POST is recorded on the message posted
// without its frame: once the message is committed, what waits for the
// next commit (the status) holds none, and a long frame can be collected.
// Before, the amendment carried the frame, which lived on until that
// commit stored it a second time: mcpmock's fallback to an HTTP+SSE
// server peaked most of a frame higher than over the other transports.
func TestLegacyClient_StatusAmendHoldsNoFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, release := statusHeldWriter(t, path)
	sess, err := w.NewSession(store.SessionInfo{Transport: store.TransportLegacySSE})
	if err != nil {
		t.Fatal(err)
	}

	// The server is a RoundTripper, not a listener: net/http's own
	// goroutines would keep the request, and the frame in its body, a
	// while after Post returned.
	stream, ended := io.Pipe()
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		switch r.Method {
		case http.MethodGet:
			go fmt.Fprint(ended, "event: endpoint\ndata: /msg\n\n")
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: stream, Request: r}, nil
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		// The message is committed before its status is known, as a
		// long frame's is while the server reads it.
		if err := w.Flush(); err != nil {
			t.Errorf("committing the message posted: %v", err)
		}
		return &http.Response{StatusCode: http.StatusAccepted, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	u, err := url.Parse("http://legacy.example/sse")
	if err != nil {
		t.Fatal(err)
	}
	c, err := DialLegacy(LegacyOptions{URL: u, Client: client, Tap: sess, Receive: func([]byte) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ended.Close() // the stream's end, which Close waits for
		c.Close()
	}()

	frame := bigNotification()
	want := len(frame)
	kept := weak.Make(&frame[0])
	if err := c.Post(frame); err != nil {
		t.Fatal(err)
	}
	frame = nil
	checkFrameFreedStatusStored(t, w, release, sess, kept, want)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// statusHeldWriter is a writer of a new cassette at path whose commit of
// an amendment with a 202 waits, on the commit goroutine, until release
// is called (the test's end calls it too): until then the amendment is
// queued, and whatever it holds lives on.
func statusHeldWriter(t *testing.T, path string) (w *store.Writer, release func()) {
	t.Helper()
	held := make(chan struct{})
	release = sync.OnceFunc(func() { close(held) })
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true,
		Rewrite: func(m *store.Message) *store.Message {
			if m.HTTP != nil && m.HTTP.Status == http.StatusAccepted {
				<-held
			}
			return m
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		release()
		w.Close()
	})
	return w, release
}

// The same of the HTTP recorder (mcpspy's proxy), which records the
// status of a POST answered without a message on the message it posted
// (sentMessage.answered).
func TestSentMessage_AnsweredHoldsNoFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, release := statusHeldWriter(t, path)
	sess, err := w.NewSession(store.SessionInfo{Transport: store.TransportLegacySSE})
	if err != nil {
		t.Fatal(err)
	}
	frame := bigNotification()
	want := len(frame)
	kept := weak.Make(&frame[0])
	at := time.Now()
	meta := &store.HTTPMeta{Method: http.MethodPost, Path: "/message?sessionId=1", Stream: store.StreamPostBody}
	// As appendSent records it.
	sm := sentMessage{sess: sess, m: store.Message{Seq: sess.Append(store.C2S, at, frame, meta), Dir: store.C2S, Time: at, Frame: frame, HTTP: meta}}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	sm.answered(http.StatusAccepted, http.Header{"Content-Length": {"0"}}, "")
	frame, sm = nil, sentMessage{} // the exchange is over
	checkFrameFreedStatusStored(t, w, release, sess, kept, want)
}

// checkFrameFreedStatusStored checks, once the caller has dropped its
// frame of want bytes (kept), which sess recorded as seq 1 and a 202 has
// answered, that nothing holds the frame while the status waits for the
// commit statusHeldWriter holds back; then, released, that seq 1 is
// stored whole with the POST's 202.
func checkFrameFreedStatusStored(t *testing.T, w *store.Writer, release func(), sess *store.Session, kept weak.Pointer[byte], want int) {
	t.Helper()
	runtime.GC()
	if kept.Value() != nil {
		t.Errorf("the %d-byte frame lives on after its message was committed: the status waiting for the next commit holds it", want)
	}
	release()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m := readStored(t, w.Path(), sess.ID(), 1)
	if m.HTTP == nil || m.HTTP.Status != http.StatusAccepted || m.HTTP.Method != http.MethodPost || len(m.Frame) != want {
		t.Errorf("the message posted is stored with %d frame bytes and HTTP %+v, want %d bytes and the POST's 202", len(m.Frame), m.HTTP, want)
	}
}

// bigNotification is a client notification long enough to be stored in
// chunks, as a long frame is.
func bigNotification() []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"%s"}}`, bytes.Repeat([]byte("a"), 4<<20))
}

func readStored(t *testing.T, path, session string, seq uint64) *store.Message {
	t.Helper()
	var m *store.Message
	err := store.View(path, func(r *store.Reader) error {
		var err error
		m, err = r.Message(session, seq)
		return err
	})
	if err != nil {
		t.Fatalf("reading %s seq %d: %v", session, seq, err)
	}
	return m
}
