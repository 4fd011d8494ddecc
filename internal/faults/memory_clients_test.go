package faults_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// clientMain is one of recorder's recording clients, as mcpmock's
// fallback runs them, recording into the cassette MCPTAPE_CLIENT_DB: it
// posts a request for MCPTAPE_CLIENT_ASK to the server at
// MCPTAPE_CLIENT_URL MCPTAPE_CLIENT_POSTS times, takes MCPTAPE_BIG_N
// messages in all, says so, and ends. Without a URL it runs the bigrun
// server as a recorder.Child, which sends them unasked; a ws:// URL is
// dialled with DialWS, one whose path ends in /sse with DialLegacy, any
// other with a StreamableClient.
func clientMain() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
	u, err := url.Parse(os.Getenv("MCPTAPE_CLIENT_URL"))
	if err != nil {
		fail(err)
	}
	n, posts := envInt("MCPTAPE_BIG_N", runFrames), envInt("MCPTAPE_CLIENT_POSTS", 1)
	ask := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q}`, os.Getenv("MCPTAPE_CLIENT_ASK"))
	w, err := store.NewWriter(os.Getenv("MCPTAPE_CLIENT_DB"), store.WriterOptions{})
	if err != nil {
		fail(err)
	}
	sess, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP, Upstream: u.String()})
	if err != nil {
		fail(err)
	}
	got := make(chan int, n)
	receive := func(f []byte) { got <- len(f) }
	var post func() error
	var end func()
	switch {
	case u.String() == "":
		// recorder.Child, running this binary as the bigrun server.
		self, err := os.Executable()
		if err != nil {
			fail(err)
		}
		c, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"env", "MCPTAPE_FAKE_SERVER=bigrun", self},
			Stderr: os.Stderr, Tap: sess}, receive)
		if err != nil {
			fail(err)
		}
		posts, end = 0, func() { c.Close() }
	case recorder.IsWebSocketURL(u):
		c, err := recorder.DialWS(context.Background(), recorder.WSOptions{URL: u, Tap: sess, Receive: receive})
		if err != nil {
			fail(err)
		}
		post, end = func() error { return c.Send(ask) }, func() { c.Close() }
	case strings.HasSuffix(u.Path, "/sse"):
		c, err := recorder.DialLegacy(recorder.LegacyOptions{URL: u, Client: http.DefaultClient, Tap: sess, Receive: receive})
		if err != nil {
			fail(err)
		}
		post, end = func() error { return c.Post(ask) }, func() { c.Close() }
	default:
		c := recorder.NewStreamableClient(recorder.StreamableOptions{URL: u, Client: http.DefaultClient, Tap: sess,
			Receive: func(f []byte, _ string) { receive(f) }})
		post, end = func() error { return c.Post(ask, nil, nil) }, func() { c.Close() }
	}
	for range posts {
		if err := post(); err != nil {
			fail(err)
		}
	}
	for range n {
		select {
		case <-got:
		case <-time.After(time.Minute):
			fail(fmt.Errorf("fewer than %d messages came", n))
		}
	}
	end()
	if err := sess.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
		fail(err)
	}
	if err := w.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, clientDone)
}

// clientDone is what clientMain says when it has ended well.
const clientDone = "client: done"

// bigLegacyUpstream is a 2024-11-05 HTTP+SSE server: GET /sse opens the
// stream and names /msg as the endpoint; a POST there that asks for
// "big" has runFrames 64 MiB messages sent on the stream.
func bigLegacyUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	asked := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			asked <- struct{}{}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /msg\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-asked:
		case <-r.Context().Done():
			return
		}
		for id := 1; id <= runFrames; id++ {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", bigFrame(id, frameSize-len(sseFraming))); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A run of 64 MiB messages taken by the recording clients that mcpmock's
// fallback and mcpspy rerun use, recording into a cassette session as
// they go, costs about what one message does: the messages are not held
// behind the store, one for each that came while it wrote. The client
// is this test binary, so not under the race detector.
func TestMemory_RunOfBigFramesClients(t *testing.T) {
	if raceEnabled {
		t.Skip("the client would be this binary, whose RSS the race detector distorts")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := bigWSUpstream(t)
	http := bigUpstream(t)
	legacy := bigLegacyUpstream(t)
	for _, tc := range []struct {
		name, url, ask string
		posts          int
		recorded       int
	}{
		{"stdio", "", "", 0, frameSize},
		{"websocket", "ws" + strings.TrimPrefix(ws.URL, "http"), "big", 1, frameSize},
		{"streamable json", http.URL, "big", runFrames, frameSize},
		{"streamable sse", http.URL, "bigsse", 1, frameSize - len(sseFraming)},
		{"legacy sse", legacy.URL + "/sse", "big", 1, frameSize - len(sseFraming)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "run.db")
			p := peertest.Start(t, t.TempDir(), []string{"MCPTAPE_FAKE_SERVER=client", "MCPTAPE_CLIENT_DB=" + db,
				"MCPTAPE_CLIENT_URL=" + tc.url, "MCPTAPE_CLIENT_ASK=" + tc.ask, fmt.Sprintf("MCPTAPE_CLIENT_POSTS=%d", tc.posts)},
				nil, nil, self)
			hwm := watchHWM(p.Cmd.Process.Pid)
			p.WaitLine(t, clientDone, 3*time.Minute)
			p.Stop(t, 30*time.Second)
			sizes := waitRecorded(t, db, runFrames)
			checkPeakUnder(t, fmt.Sprintf("client %s, %d frames", tc.name, runFrames), hwm, sizes, tc.recorded, runRSSLimit)
		})
	}
}
