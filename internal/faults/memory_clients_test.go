package faults_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// clientDone is what memclient says when it has ended well.
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
// is memclient, built without the race detector even under -race.
func memoryRunOfBigFramesClients(t *testing.T) {
	client := peertest.ReleaseBinaryPkg(t, "memclient", "./internal/faults/memclient")
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
		limit          int
	}{
		// recorder.Child holds one line at 2.42x (measured, steady):
		// its reader's pieces and the line, which the Tap and the
		// receiver share, then the store's commit copy. Bounded at 3x:
		// a second copy for the receiver (a line read back through a
		// pipe, 3.4-4.4x) fails.
		{"stdio", "", "", 0, frameSize, rssLimit},
		{"websocket", "ws" + strings.TrimPrefix(ws.URL, "http"), "big", 1, frameSize, runRSSLimit},
		{"streamable json", http.URL, "big", runFrames, frameSize, runRSSLimit},
		{"streamable sse", http.URL, "bigsse", 1, frameSize - len(sseFraming), runRSSLimit},
		{"legacy sse", legacy.URL + "/sse", "big", 1, frameSize - len(sseFraming), runRSSLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "run.db")
			p := peertest.Start(t, t.TempDir(), []string{"MCPTAPE_CLIENT_SERVER=" + self, "MCPTAPE_CLIENT_DB=" + db,
				"MCPTAPE_CLIENT_URL=" + tc.url, "MCPTAPE_CLIENT_ASK=" + tc.ask, fmt.Sprintf("MCPTAPE_CLIENT_POSTS=%d", tc.posts),
				fmt.Sprintf("MCPTAPE_BIG_N=%d", runFrames)},
				nil, nil, client)
			hwm := watchHWM(p.Cmd.Process.Pid)
			p.WaitLine(t, clientDone, 3*time.Minute)
			p.Stop(t, 30*time.Second)
			sizes := waitRecorded(t, db, runFrames)
			checkPeakUnder(t, fmt.Sprintf("client %s, %d frames", tc.name, runFrames), hwm, sizes, tc.recorded, tc.limit)
		})
	}
}
