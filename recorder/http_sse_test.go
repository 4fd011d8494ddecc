package recorder_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// upstreamPaths are the two ways the proxy reaches an http upstream: its
// own connection per client connection (the usual path), and the shared
// http.Transport (https, or HTTP_PROXY set). They relay streams with
// different flushing code, so stream tests run on both.
var upstreamPaths = []struct {
	name      string
	configure func(*recorder.HTTPProxy)
}{
	{"own connection", func(*recorder.HTTPProxy) {}},
	{"shared transport", func(p *recorder.HTTPProxy) { p.Transport = recorder.NewUpstreamTransport(false) }},
}

// An SSE event reaches the client as soon as the upstream has sent it, not
// when the stream ends: the upstream holds its second event back until
// the client has read the first through the proxy.
func TestHTTPProxy_SSEEventByEvent(t *testing.T) {
	const first = "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	const second = "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	for _, path := range upstreamPaths {
		t.Run(path.name, func(t *testing.T) {
			clientHasFirst, testOver := make(chan struct{}), make(chan struct{})
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, first)
				w.(http.Flusher).Flush()
				select {
				case <-clientHasFirst:
					io.WriteString(w, second)
				case <-testOver:
				}
			}))
			px := startHTTPProxy(t, up, path.configure)
			t.Cleanup(func() { close(testOver) }) // before the proxy stops, which waits for the handler

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", px.URL, strings.NewReader(rpcBody))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			got := make(chan string, 1)
			go func() {
				var ev strings.Builder
				for !strings.HasSuffix(ev.String(), "\n\n") {
					line, err := br.ReadString('\n')
					ev.WriteString(line)
					if err != nil {
						break
					}
				}
				got <- ev.String()
			}()
			select {
			case ev := <-got:
				if ev != first {
					t.Fatalf("first event through the proxy: %q, want %q", ev, first)
				}
			case <-time.After(10 * time.Second):
				cancel() // unblocks the reader
				t.Fatal("the first event had not reached the client 10 s after the upstream sent it: the proxy holds events back")
			}
			close(clientHasFirst)
			rest, err := io.ReadAll(br)
			if err != nil || string(rest) != second {
				t.Fatalf("rest of the stream: %q, %v; want %q", rest, err, second)
			}
		})
	}
}

// Each message-carrying event is recorded with its event id, its type,
// the retry in force and the ids of the priming events (id, no data) that
// came before it on the stream; the client gets the stream unchanged.
func TestHTTPProxy_SSEFrameMeta(t *testing.T) {
	const stream = "id: p0\nretry: 500\ndata:\n\n" +
		"id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n" +
		": a comment\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"id: e3\nretry: 900\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	type meta struct {
		EventID, EventType, Retry string
		Priming                   []string
	}
	want := []meta{
		{EventID: "e1", EventType: "message", Retry: "500", Priming: []string{"p0"}},
		{Retry: "500"},
		{EventID: "e3", Retry: "900"},
	}
	for _, path := range upstreamPaths {
		t.Run(path.name, func(t *testing.T) {
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, stream)
			}))
			px := startHTTPProxy(t, up, path.configure)
			resp, body := post(t, px.URL, rpcBody, nil)
			if resp.StatusCode != 200 || body != stream {
				t.Fatalf("client got %d %q, want 200 and the stream unchanged", resp.StatusCode, body)
			}
			px.Stop()
			sessions := readCassette(t, px.Cassette)
			if len(sessions) != 1 {
				t.Fatalf("%d sessions recorded, want 1", len(sessions))
			}
			var got []meta
			for _, m := range sessions[0].msgs {
				if m.Dir != store.S2C {
					continue
				}
				if m.HTTP == nil || m.HTTP.Stream != "post-sse" || m.HTTP.Status != 200 {
					t.Errorf("seq %d: http meta %+v, want stream post-sse, status 200", m.Seq, m.HTTP)
					continue
				}
				got = append(got, meta{m.HTTP.EventID, m.HTTP.EventType, m.HTTP.Retry, m.HTTP.Priming})
			}
			if !slices.EqualFunc(got, want, func(a, b meta) bool {
				return a.EventID == b.EventID && a.EventType == b.EventType && a.Retry == b.Retry && slices.Equal(a.Priming, b.Priming)
			}) {
				t.Errorf("recorded event meta\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
