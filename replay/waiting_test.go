package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"
)

// playingSource answers a tools/call with a Play that hands the test the
// request it was given, then waits for release; anything else at once.
type playingSource struct {
	whole   bool // Prepared.WholeRequest
	played  chan *Request
	release chan struct{}
	letGo   sync.Once
	// frame points weakly at the frame of the last tools/call prepared.
	frame weak.Pointer[byte]
}

func newPlayingSource(whole bool) *playingSource {
	return &playingSource{whole: whole, played: make(chan *Request, 1), release: make(chan struct{})}
}

func (s *playingSource) Name() string        { return "playing" }
func (s *playingSource) Open() SessionSource { return s }
func (s *playingSource) Unused() []string    { return nil }

func (s *playingSource) Answer(context.Context, Peer, *Request) (Reply, bool) { return Reply{}, false }

func (s *playingSource) Prepare(req *Request) (*Prepared, bool) {
	if req.Method != "tools/call" {
		return &Prepared{Reply: Reply{Result: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)}}, true
	}
	s.frame = weak.Make(&req.Frame[0])
	return &Prepared{WholeRequest: s.whole, Play: func(ctx context.Context, _ Peer, req *Request) Reply {
		s.played <- req
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		return Reply{Result: json.RawMessage(`{}`)}
	}}, true
}

// playingSession is a session of a server whose one source is a
// playingSource; it closes when the test ends.
func playingSession(t *testing.T, whole bool) (*playingSource, *session) {
	t.Helper()
	src := newPlayingSource(whole)
	srv, err := NewServer([]Source{src}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sess := srv.newSession(context.Background(), func([]byte) error { return nil }, nil)
	t.Cleanup(sess.close)
	return src, sess
}

// bigToolCall is a tools/call of about size bytes that asks for progress.
func bigToolCall(id, size int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"%s"},"_meta":{"progressToken":"tok"}}}`, id, strings.Repeat("B", size))
}

// A big call that waits for its answer holds what the answer needs (its
// id, method, progress token), not its frame: the frame is collected
// while Play waits. Before, the goroutine playing the answer held the
// whole request, and a run of 64 MiB calls with a delay cost a frame
// each.
func TestPlay_WaitingCallHoldsNotItsFrame(t *testing.T) {
	src, sess := playingSession(t, false)
	ex := newRecordingExchange()
	sess.handle(bigToolCall(7, 1<<20), ex)

	req := waitPlayed(t, src.played)
	if req.Frame != nil || string(req.ID) != "7" || req.Method != "tools/call" {
		t.Errorf("Play got the request with id %s, method %q and a %d-byte frame; want 7, tools/call and none", req.ID, req.Method, len(req.Frame))
	}
	if got, want := string(req.Params), `{"_meta":{"progressToken":"tok"}}`; got != want {
		t.Errorf("Play got params %.200s, want %s", got, want)
	}
	if tok := string(req.ProgressToken()); tok != `"tok"` {
		t.Errorf("the waiting request's progress token is %s, want \"tok\"", tok)
	}
	src.waitFrameGone(t)

	src.let()
	waitPlayed(t, ex.finished)
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.msgs) != 1 || !strings.Contains(string(ex.msgs[0]), `"id":7`) {
		t.Errorf("answered %q, want one answer to id 7", ex.msgs)
	}
}

// let lets the call being played be answered.
func (s *playingSource) let() { s.letGo.Do(func() { close(s.release) }) }

// waitFrameGone collects garbage until the frame of the call being
// played is gone, and fails t if it stays.
func (s *playingSource) waitFrameGone(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.frame.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the frame of a call waiting for its answer was still reachable after garbage collections")
		}
		runtime.GC()
	}
}

// Over Streamable HTTP too, a call that waits holds not its POST's body.
func TestPlay_WaitingCallHoldsNotItsBody(t *testing.T) {
	src := newPlayingSource(false)
	srv, err := NewServer([]Source{src}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer src.let() // before the server closes: it waits for the call
	post := func(body []byte, sid string) (*http.Response, error) {
		r, err := http.NewRequest(http.MethodPost, hs.URL+"/mcp", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return http.DefaultClient.Do(r)
	}
	init, err := post([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	init.Body.Close()
	sid := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q", init.StatusCode, sid)
	}
	answer := make(chan string, 1)
	go func() {
		res, err := post(bigToolCall(7, 1<<20), sid)
		if err != nil {
			answer <- err.Error()
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		answer <- string(b)
	}()
	waitPlayed(t, src.played)
	src.waitFrameGone(t)
	src.let()
	if got := waitPlayed(t, answer); !strings.Contains(got, `"id":7`) {
		t.Errorf("the call was answered %.300q, want an answer to id 7", got)
	}
}

// A Play that asks for the whole request (Prepared.WholeRequest) gets it
// as it came, frame and all.
func TestPlay_WholeRequest(t *testing.T) {
	src, sess := playingSession(t, true)
	frame := bigToolCall(7, 1<<20)
	sess.handle(frame, newRecordingExchange())
	req := waitPlayed(t, src.played)
	src.let()
	if len(req.Frame) != len(frame) || len(req.Params) < 1<<20 {
		t.Errorf("Play got a %d-byte frame and %d bytes of params, want the %d-byte call whole", len(req.Frame), len(req.Params), len(frame))
	}
}

// A small request waits as it came: nothing is copied.
func TestWaiting_SmallRequestAsItIs(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	w, err := splitRPC(frame)
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{ID: w.id, Method: "tools/call", Params: w.params, Frame: frame}
	if req.Waiting() != req {
		t.Error("a small request was copied to wait")
	}
}

func waitPlayed[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came in 10 s")
		var zero T
		return zero
	}
}
