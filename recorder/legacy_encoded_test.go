package recorder_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A legacy server behind gzip middleware whose endpoint event names it by
// an absolute URI: the proxy must rewrite that URI inside the compressed
// stream, or the clients post straight to the upstream (go-sdk) or give up
// (the TS SDK: "Endpoint origin does not match connection origin"). Both
// clients ask for gzip and undo it themselves; through the proxy each
// makes a full exchange, and the cassette holds both sides of it, every
// answer after its request.
func TestHTTPProxy_LegacyAbsoluteEndpointCompressed(t *testing.T) {
	var mu sync.Mutex
	var accepted []string // Accept-Encoding of each GET /sse the upstream saw
	up := absoluteEndpointServer(t, func(h http.Handler) http.Handler {
		gz := compressResponses(t, "gzip", h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				mu.Lock()
				accepted = append(accepted, r.Header.Get("Accept-Encoding"))
				mu.Unlock()
			}
			gz.ServeHTTP(w, r)
		})
	})
	px := startHTTPProxy(t, up+"/sse")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, nil)
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: px.URL + "/sse"}, nil)
	if err != nil {
		t.Fatalf("go-sdk client through the proxy: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via go"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "via go" {
		t.Fatalf("echo: %v %v", res, err)
	}
	_ = cs.Close()
	if out := runTSClient(t, "sse", px.URL+"/sse", "echo", `{"text":"via ts"}`); out.Echo != "via ts" || out.Tools == 0 {
		t.Errorf("TS client through the proxy saw %+v", out)
	}
	px.Stop()

	mu.Lock()
	for i, ae := range accepted {
		if !strings.Contains(ae, "gzip") {
			t.Errorf("GET /sse %d asked for Accept-Encoding %q: the test needs clients that ask for gzip", i+1, ae)
		}
	}
	mu.Unlock()
	// Each session's answers are recorded after their requests, and every
	// frame from the stream is its decompressed message.
	asked := map[string]map[string]uint64{} // session → request id → seq
	wantSent := []string{"initialize", "notifications/initialized", "tools/list", "tools/call"}
	checkRewrittenLegacySessions(t, readCassette(t, px.Cassette), up, wantSent, func(s recorded, m *store.Message) {
		sum := jsonrpc.Classify(m.Frame)
		if sum.Kind == jsonrpc.Malformed {
			t.Errorf("session %s seq %d recorded malformed (compressed bytes?): %q", s.info.ID, m.Seq, m.Frame)
		}
		if asked[s.info.ID] == nil {
			asked[s.info.ID] = map[string]uint64{}
		}
		switch {
		case m.Dir == store.C2S && sum.Kind == jsonrpc.Request:
			asked[s.info.ID][sum.ID] = m.Seq
		case m.Dir == store.S2C:
			if m.HTTP.Stream != "legacy-sse" || m.HTTP.ResponseHeader.Get("Content-Encoding") != "gzip" {
				t.Errorf("session %s seq %d: stream %q, Content-Encoding %q; want legacy-sse, gzip (how it travelled)",
					s.info.ID, m.Seq, m.HTTP.Stream, m.HTTP.ResponseHeader.Get("Content-Encoding"))
			}
			if sum.Kind == jsonrpc.Response {
				if _, ok := asked[s.info.ID][sum.ID]; !ok {
					t.Errorf("session %s seq %d: answer to %s recorded before its request", s.info.ID, m.Seq, sum.ID)
				}
				delete(asked[s.info.ID], sum.ID)
			}
		}
	})
	for id, left := range asked {
		if len(left) > 0 {
			t.Errorf("session %s: requests without a recorded answer: %v", id, left)
		}
	}
}

// encodeTo returns a compressor for coding that writes to w.
func encodeTo(tb testing.TB, coding string, w io.Writer) interface {
	io.WriteCloser
	Flush() error
} {
	tb.Helper()
	switch coding {
	case "gzip":
		return gzip.NewWriter(w)
	case "deflate":
		return zlib.NewWriter(w)
	case "br":
		return brotli.NewWriter(w)
	case "zstd":
		zw, err := zstd.NewWriter(w)
		if err != nil {
			tb.Fatal(err)
		}
		return zw
	}
	tb.Fatalf("no coding %q", coding)
	return nil
}

// decode undoes a content coding as far as it can.
func decode(coding string, b []byte) ([]byte, error) {
	zr, err := decodeFrom(coding, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// decodeFrom undoes a content coding as a client does.
func decodeFrom(coding string, r io.Reader) (io.ReadCloser, error) {
	switch coding {
	case "gzip":
		return gzip.NewReader(r)
	case "deflate":
		return zlib.NewReader(r)
	case "br":
		return io.NopCloser(brotli.NewReader(r)), nil
	case "zstd":
		d, err := zstd.NewReader(r)
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return nil, errors.New("no coding " + coding)
}

// getSSE opens url as a client that asks for coding and undoes it
// itself (Go's client would otherwise do it out of sight).
func getSSE(tb testing.TB, url, coding string) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Accept-Encoding", coding)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

// On a compressed legacy stream, the client gets each event as soon as
// the upstream has sent it, while the upstream waits to send the next:
// the proxy flushes event by event and never waits for the stream's end.
// The endpoint event comes rewritten when it is an absolute URI on the
// upstream, and the rest unchanged once decompressed, in the coding the
// client asked for; a stream with nothing to rewrite comes byte for byte.
func TestHTTPProxy_CompressedEndpointFlushedEventByEvent(t *testing.T) {
	rest := []string{
		": a comment\nid: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n\n",
	}
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		for _, tt := range []struct {
			name     string
			endpoint string // {UP} is the upstream's base URL, {PX} the proxy's
			want     string // the endpoint the client gets; "" when the stream passes byte for byte
		}{
			{"absolute on the upstream", "{UP}/message?sid=1", "{PX}/message?sid=1"},
			{"relative", "/message?sid=1", ""},
			{"absolute elsewhere", "http://elsewhere.example/message?sid=1", ""},
		} {
			t.Run(coding+"/"+tt.name, func(t *testing.T) {
				endpointEvent := func(endpoint string) string {
					return "event: endpoint\r\ndata: " + endpoint + "\r\n\r\n"
				}
				step := make(chan struct{}) // the client has the last event: send the next
				var sent syncbuf.Buffer
				up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					w.Header().Set("Content-Encoding", coding)
					w.Header().Set("Cache-Control", "no-cache")
					zw := encodeTo(t, coding, io.MultiWriter(w, &sent))
					for _, ev := range append([]string{endpointEvent(strings.ReplaceAll(tt.endpoint, "{UP}", "http://"+r.Host))}, rest...) {
						io.WriteString(zw, ev)
						zw.Flush()
						w.(http.Flusher).Flush()
						select {
						case <-step:
						case <-r.Context().Done():
							return
						}
					}
					zw.Close()
				}))
				px := startHTTPProxy(t, up+"/sse")
				resp := getSSE(t, px.URL+"/sse", coding)
				if got := resp.Header.Get("Content-Encoding"); got != coding {
					t.Errorf("Content-Encoding %q, want %q", got, coding)
				}
				if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
					t.Errorf("Cache-Control %q, want the upstream's", got)
				}
				var raw bytes.Buffer
				events := make(chan sse.Event, 1+len(rest))
				ended := make(chan error, 1)
				go func() {
					zr, err := decodeFrom(coding, io.TeeReader(resp.Body, &raw))
					if err != nil {
						ended <- err
						return
					}
					defer zr.Close()
					rd := sse.NewReader(zr, 0)
					for {
						ev, err := rd.Next()
						if err != nil {
							ended <- err
							return
						}
						events <- ev
					}
				}()
				wantEndpoint := strings.ReplaceAll(tt.endpoint, "{UP}", up)
				if tt.want != "" {
					wantEndpoint = strings.ReplaceAll(tt.want, "{PX}", px.URL)
				}
				for i, want := range append([]string{endpointEvent(wantEndpoint)}, rest...) {
					select {
					case ev := <-events:
						if string(ev.Raw) != want {
							t.Errorf("event %d: %q, want %q", i+1, ev.Raw, want)
						}
					case err := <-ended:
						t.Fatalf("event %d: the stream ended: %v", i+1, err)
					case <-time.After(30 * time.Second): // a hang guard, not a measure
						t.Fatalf("event %d did not come while the upstream waits: the proxy holds the stream back", i+1)
					}
					step <- struct{}{}
				}
				if err := <-ended; !errors.Is(err, io.EOF) {
					t.Errorf("the stream ended with %v, want a whole %s stream", err, coding)
				}
				px.Stop()
				if tt.want == "" && raw.String() != sent.String() {
					t.Errorf("client got\n%q\nwant the upstream's bytes\n%q", raw.String(), sent.String())
				}
				rs := readCassette(t, px.Cassette)
				if len(rs) != 1 || len(rs[0].msgs) != 1+len(rest) {
					t.Fatalf("recorded %q, want the endpoint event and the messages", flat(rs))
				}
				if got, want := string(rs[0].msgs[0].Frame), strings.ReplaceAll(tt.endpoint, "{UP}", up); got != want {
					t.Errorf("recorded endpoint %q, want the upstream's own %q", got, want)
				}
			})
		}
	}
}

// An upstream that gives its compressed stream a Content-Length: the
// stream compressed anew has another length, so the proxy drops the
// header, and the client still gets the whole stream, rewritten.
func TestHTTPProxy_CompressedEndpointDropsContentLength(t *testing.T) {
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := compress(t, "gzip", "event: endpoint\ndata: http://"+r.Host+"/message?sid=1\n\n", "data: {}\n\n")
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	}))
	px := startHTTPProxy(t, up+"/sse")
	resp := getSSE(t, px.URL+"/sse", "gzip")
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
		t.Errorf("Content-Length %d (%q), want none", resp.ContentLength, resp.Header.Get("Content-Length"))
	}
	plain, err := decode("gzip", raw)
	if want := "event: endpoint\ndata: " + px.URL + "/message?sid=1\n\ndata: {}\n\n"; err != nil || string(plain) != want {
		t.Errorf("client decoded %q (%v), want %q", plain, err, want)
	}
}

// Compressed legacy streams mcpspy cannot read: a coding it does not know
// and gzip that is corrupt from the start reach the client byte for byte,
// with a warning that says the endpoint could not be rewritten; gzip that
// breaks after a rewritten endpoint cannot go on as it came, so the
// client gets what decompressed and then a cut stream, never one that
// looks whole, even while the upstream keeps its stream open. The proxy
// goes on serving, and nothing panics.
func TestHTTPProxy_UndecodableLegacyStream(t *testing.T) {
	junk := bytes.Repeat([]byte("\x1f\x8b\x08\x00not really gzip\n\n"), 400)
	endpointThen := func(up string, tail string) []byte {
		good := compress(t, "gzip", "event: endpoint\ndata: "+up+"/message?sid=1\n\n", "data: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n")
		cut := len(good) - 8 // the CRC and length
		return append(good[:cut:cut], tail...)
	}
	for _, tt := range []struct {
		name, coding string
		stream       func(up string) []byte
		holdOpen     bool   // the upstream sends nothing more, and does not end
		rewritten    bool   // the endpoint was rewritten, then the stream broke
		warning      string // in the log
	}{
		{"a coding mcpspy does not know", "compress", func(string) []byte { return junk }, false, false, "could not be rewritten to the proxy"},
		{"gzip corrupt from the start", "gzip", func(string) []byte { return junk }, false, false, "could not be rewritten to the proxy"},
		{"gzip with a bad checksum after the endpoint", "gzip", func(up string) []byte {
			return endpointThen(up, "\xde\xad\xbe\xef\x00\x00\x00\x00") // the events decompress, the check fails
		}, false, true, "cutting the stream"},
		{"gzip corrupt after the endpoint, stream open", "gzip", func(up string) []byte {
			return endpointThen(up, "\xff\xff\xff\xff junk")
		}, true, true, "cutting the stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", tt.coding)
				for chunk := range slices.Chunk(tt.stream("http://"+r.Host), 100) {
					w.Write(chunk)
					w.(http.Flusher).Flush()
				}
				if tt.holdOpen {
					<-r.Context().Done()
				}
			}))
			stream := tt.stream(up)
			var logText syncbuf.Buffer
			px := startHTTPProxy(t, up+"/sse", func(p *recorder.HTTPProxy) { p.Log = &logText })
			resp := getSSE(t, px.URL+"/sse", tt.coding)
			got, readErr := io.ReadAll(resp.Body)
			if !tt.rewritten {
				if readErr != nil || !bytes.Equal(got, stream) {
					t.Errorf("client got %d bytes (%v), want the %d sent, unchanged", len(got), readErr, len(stream))
				}
			} else {
				if readErr == nil {
					t.Errorf("the client read the stream to a clean end: want it cut")
				}
				plain, _ := decode("gzip", got)
				if want := "event: endpoint\ndata: " + px.URL + "/message?sid=1\n\n"; !strings.HasPrefix(string(plain), want) {
					t.Errorf("client decoded %q, want it to start with %q", plain, want)
				}
			}
			again := getSSE(t, px.URL+"/sse", tt.coding) // still serving
			if again.StatusCode != http.StatusOK {
				t.Errorf("next request: status %d", again.StatusCode)
			}
			again.Body.Close()
			px.Stop()
			if log := logText.String(); !strings.Contains(log, tt.coding+" stream on /sse") || !strings.Contains(log, tt.warning) || strings.Contains(log, "panic") {
				t.Errorf("log %q: want a warning naming the coding and the path, saying %q, and no panic", log, tt.warning)
			}
		})
	}
}

// FuzzHTTPProxy_CompressedLegacyStream serves a gzip event stream,
// perhaps corrupted at one byte, as a legacy /sse answer ({UP} in it is
// the upstream's base URL). Whatever it is, the proxy neither panics nor
// hangs, and the client gets either the upstream's bytes as they came or,
// once the endpoint event was rewritten, the same events compressed anew:
// the first one pointing at the proxy, the rest unchanged as far as they
// decompress, and a stream that does not end whole unless the upstream's
// did.
// pointsAt says whether endpoint is an absolute URI on base's scheme and
// host, which the proxy rewrites. Both compare without regard to case, as
// URIs do (a stream whose bytes a fuzzer flipped may say "httP://").
func pointsAt(endpoint, base string) bool {
	e, err1 := url.Parse(strings.TrimSpace(endpoint))
	b, err2 := url.Parse(base)
	return err1 == nil && err2 == nil && strings.EqualFold(e.Scheme, b.Scheme) && strings.EqualFold(e.Host, b.Host)
}

func FuzzHTTPProxy_CompressedLegacyStream(f *testing.F) {
	f.Add("event: endpoint\ndata: {UP}/message?sid=1\n\nevent: message\ndata: {}\n\n", uint16(0), byte(0))
	f.Add("event: endpoint\ndata: {UP}/message?sid=1\n\nevent: message\ndata: {}\n\n", uint16(40), byte(0x55))
	f.Add("event: endpoint\r\ndata: {UP}/message?sid=1\r\n\r\n: c\n\ndata: x\n", uint16(3), byte(1))
	f.Add("event: endpoint\ndata: /message?sid=1\n\ndata: {}\n\n", uint16(0), byte(0))
	f.Add(": hello\n\nevent: endpoint\ndata: {UP}/message\n\n", uint16(0), byte(0))
	f.Add("event: endpoint\ndata: {UP}/message?sid=1", uint16(0), byte(0))
	f.Add("event: endpoint\ndata: {UP}/message?sid=1#a\ndata: b\n\n", uint16(0), byte(0))
	var mu sync.Mutex
	var stream []byte
	up := serveHTTP(f, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := stream
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		for chunk := range slices.Chunk(b, 64) {
			w.Write(chunk)
			w.(http.Flusher).Flush()
		}
	}))
	log := &fuzzLog{}
	px := startHTTPProxy(f, up+"/sse", func(p *recorder.HTTPProxy) { p.Log = log })
	client := &http.Client{Timeout: fuzzHangLimit}
	f.Fuzz(func(t *testing.T, plain string, at uint16, flip byte) {
		plain = strings.ReplaceAll(plain, "{UP}", up)
		b := compress(t, "gzip", strings.SplitAfter(plain, "\n\n")...)
		if flip != 0 {
			b[int(at)%len(b)] ^= flip
		}
		mu.Lock()
		stream = b
		mu.Unlock()
		req, _ := http.NewRequest(http.MethodGet, px.URL+"/sse", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		got, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ne := net.Error(nil); errors.As(readErr, &ne) && ne.Timeout() {
			t.Fatalf("the proxy hung: %v", readErr)
		}
		log.check(t)
		upPlain, upErr := decode("gzip", b)
		upFirst, upFirstErr := sse.NewReader(bytes.NewReader(upPlain), 0).Next()
		mustRewrite := upFirstErr == nil && upFirst.Complete && upFirst.Type == "endpoint" &&
			string(upFirst.Data) == up+"/message?sid=1"
		if bytes.Equal(got, b) && readErr == nil {
			if mustRewrite {
				t.Errorf("endpoint %q reached the client unrewritten", upFirst.Data)
			}
			return
		}
		cPlain, cErr := decode("gzip", got)
		rd := sse.NewReader(bytes.NewReader(cPlain), 0)
		cFirst, err := rd.Next()
		if err != nil || cFirst.Type != "endpoint" || !strings.HasPrefix(string(cFirst.Data), px.URL) ||
			upFirstErr != nil || !pointsAt(string(upFirst.Data), up) {
			t.Fatalf("the stream changed though its endpoint %q (%v) was not rewritten: client got %q (%v, %v)",
				upFirst.Data, upFirstErr, clip(cPlain), cErr, readErr)
		}
		cRest, upRest := cPlain[len(cFirst.Raw):], upPlain[len(upFirst.Raw):]
		if !bytes.HasPrefix(upRest, cRest) {
			t.Fatalf("after the endpoint the client got %q, want a prefix of the upstream's %q", clip(cRest), clip(upRest))
		}
		whole := readErr == nil && cErr == nil
		if whole && (upErr != nil || len(cRest) != len(upRest)) {
			t.Fatalf("the client got a stream that ends whole (%d of %d bytes after the endpoint) from an upstream stream that did not (%v)",
				len(cRest), len(upRest), upErr)
		}
		if upErr == nil && !whole {
			t.Fatalf("a whole upstream stream reached the client cut: %v, %v", readErr, cErr)
		}
	})
}
