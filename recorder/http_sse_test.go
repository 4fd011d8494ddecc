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

	"github.com/mcptape/mcptape/internal/sse"
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
			sessions := relayStream(t, stream, path.configure)
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

// An event too big to parse (over sse.DefaultMaxEvent) is not recorded,
// but the client still gets the whole stream byte for byte: the part the
// parser had buffered, then the rest as it comes. What came before it is
// recorded as usual.
func TestHTTPProxy_SSEEventTooLongForwardedWhole(t *testing.T) {
	const first = "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	const last = "id: e3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	// The event is one byte too long by the end of its data line, so the
	// parser gives up with the bytes after that line still in its buffer
	// (a line that overflows midway leaves nothing buffered): "id: e2\n"
	// and "data: " are 13 bytes.
	huge := "id: e2\ndata: " + strings.Repeat("x", sse.DefaultMaxEvent-13) + "\n\n"
	stream := first + huge + last
	for _, path := range upstreamPaths {
		t.Run(path.name, func(t *testing.T) {
			sessions := relayStream(t, stream, path.configure)
			var s2c []string
			for _, m := range sessions[0].msgs {
				if m.Dir == store.S2C {
					s2c = append(s2c, m.HTTP.EventID)
				}
			}
			if !slices.Equal(s2c, []string{"e1"}) {
				t.Errorf("recorded server events %q, want only e1 (the rest goes unrecorded)", s2c)
			}
		})
	}
}

// A message of 64 MiB, the most mcpspy keeps of one, is recorded whole
// when it comes as an event: the event's bound leaves room for its
// framing.
func TestHTTPProxy_SSEEventOf64MiBRecorded(t *testing.T) {
	const head = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`
	const tail = `"}}`
	msg := head + strings.Repeat("x", 64<<20-len(head)-len(tail)) + tail
	stream := "id: e1\nevent: message\ndata: " + msg + "\n\n"
	sessions := relayStream(t, stream, upstreamPaths[0].configure)
	var s2c []int
	for _, m := range sessions[0].msgs {
		if m.Dir == store.S2C {
			s2c = append(s2c, len(m.Frame))
		}
	}
	if !slices.Equal(s2c, []int{64 << 20}) {
		t.Errorf("recorded server frames of %v bytes, want one of %d", s2c, 64<<20)
	}
}

// relayStream answers one POST through a proxy (set up by configure) with
// stream as an SSE body, checks that the client got it unchanged, and
// gives what the proxy recorded: one session.
func relayStream(t *testing.T, stream string, configure func(*recorder.HTTPProxy)) []recorded {
	t.Helper()
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	px := startHTTPProxy(t, up, configure)
	resp, body := post(t, px.URL, rpcBody, nil)
	if resp.StatusCode != 200 || body != stream {
		t.Fatalf("client got %d and %d bytes, want 200 and the stream's %d bytes unchanged", resp.StatusCode, len(body), len(stream))
	}
	px.Stop()
	sessions := readCassette(t, px.Cassette)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions recorded, want 1", len(sessions))
	}
	return sessions
}
