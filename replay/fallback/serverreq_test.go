package fallback_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/store"
)

// rootsReplyWatcher is an HTTP client transport that notes when the client
// POSTs its answer to a roots/list.
type rootsReplyWatcher struct {
	next    http.RoundTripper
	replied chan struct{}
}

func (w *rootsReplyWatcher) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"result":{"roots"`)) {
			select {
			case w.replied <- struct{}{}:
			default:
			}
		}
	}
	return w.next.RoundTrip(r)
}

// TestFallback_ServerAsksBetweenRequests: server-everything over
// Streamable HTTP asks the client for its roots on its own, right after
// notifications/initialized, while no request of the client's is being
// answered. mcpmock, serving the live client over Streamable HTTP, asks
// it on the client's GET stream (the stream of the request answered last
// has ended), and the client's answer reaches the server.
func TestFallback_ServerAsksBetweenRequests(t *testing.T) {
	up, err := url.Parse(peertest.EverythingHTTP(t, "streamableHttp") + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "roots.db")
	fb := newFallback(t, fallback.Options{URL: up, Record: db})
	srv, err := replay.NewServer([]replay.Source{fb}, replay.Options{CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, stop := serveReplay(srv)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	watch := &rootsReplyWatcher{next: http.DefaultTransport.(*http.Transport).Clone(), replied: make(chan struct{}, 1)}
	c := connect(ctx, t, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: watch}})
	select {
	case <-watch.replied:
	case <-time.After(15 * time.Second):
		t.Error("the live client was never asked for its roots, or did not answer")
	}
	if got := c.call(ctx, t, "echo", map[string]any{"message": "after roots"}, nil); got != "Echo: after roots" {
		t.Errorf("echo: %q", got)
	}
	c.cs.Close()
	stop()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}

	// The server got the client's roots, not mcpmock's error.
	all := sessions(t, db)
	// The first session holds the server's refusal of the client's
	// server/discover (server-everything answers 400 and an error with a
	// null id): the status on the request, which the fallback held back
	// until the server's first frame, and the body as that frame.
	if probe := all[0].Messages; len(probe) != 2 || !strings.Contains(string(probe[0].Frame), `"server/discover"`) ||
		probe[0].HTTP.Status != http.StatusBadRequest || !strings.Contains(probe[0].Note, "refused without a message") ||
		probe[1].Dir != store.S2C || probe[1].HTTP.Status != http.StatusBadRequest || !strings.Contains(string(probe[1].Frame), `"id":null`) {
		for _, m := range probe {
			t.Logf("%s %d %s %+v note %q", m.Dir, m.Seq, m.Frame, m.HTTP, m.Note)
		}
		t.Errorf("the first session: want server/discover refused 400, with its body")
	}
	var asked, answered bool
	for _, m := range all[len(all)-1].Messages {
		f := string(m.Frame)
		switch {
		case m.Dir == store.S2C && strings.Contains(f, `"method":"roots/list"`):
			asked = true
		case m.Dir == store.C2S && strings.Contains(f, "file:///work/fallback-root"):
			answered = true
		}
	}
	if !asked || !answered {
		t.Errorf("recorded: roots/list asked %v, the client's roots sent back %v", asked, answered)
	}
}
