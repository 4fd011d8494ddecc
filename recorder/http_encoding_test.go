package recorder_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// compressResponses compresses every response of h in coding for
// clients that accept it, flushing the compressor on every Flush so that
// SSE events still travel one by one, as compression middleware (or a
// CDN) in front of an MCP server does.
func compressResponses(tb testing.TB, coding string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), coding) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Encoding", coding)
		cw := &compressWriter{ResponseWriter: w, zw: encodeTo(tb, coding, w)}
		h.ServeHTTP(cw, r)
		cw.zw.Close()
	})
}

type compressWriter struct {
	http.ResponseWriter
	zw interface {
		io.WriteCloser
		Flush() error
	}
}

func (g *compressWriter) WriteHeader(code int) {
	g.Header().Del("Content-Length")
	g.ResponseWriter.WriteHeader(code)
}
func (g *compressWriter) Write(b []byte) (int, error) { return g.zw.Write(b) }
func (g *compressWriter) Flush() {
	g.zw.Flush()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// decodingTransport asks for a coding Go's client does not undo by
// itself (br, zstd) and undoes it, as a client that accepts it does.
type decodingTransport struct{ coding string }

func (d decodingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept-Encoding", d.coding)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.Header.Get("Content-Encoding") != d.coding {
		return resp, err
	}
	zr, err := decodeFrom(d.coding, resp.Body)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	resp.Body = decodedBody{zr, resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.ContentLength = -1
	return resp, nil
}

type decodedBody struct{ zr, body io.ReadCloser }

func (b decodedBody) Read(p []byte) (int, error) { return b.zr.Read(p) }
func (b decodedBody) Close() error {
	b.zr.Close()
	return b.body.Close()
}

// A go-sdk server behind compression middleware and a go-sdk client
// that asks for the coding and undoes it (Go's HTTP client does so for
// gzip by itself): the client gets the compressed bytes untouched and
// works as it does directly, and the cassette holds the messages
// decompressed, SSE events and JSON bodies alike, each response after its
// request and before the next request.
func TestHTTPProxy_CompressedResponses(t *testing.T) {
	for _, tc := range []struct {
		coding    string
		jsonReply bool
	}{{"gzip", false}, {"gzip", true}, {"br", false}, {"br", true}, {"zstd", false}, {"zstd", true}} {
		coding, jsonAnswers := tc.coding, tc.jsonReply
		name := coding + "/SSE answers"
		if jsonAnswers {
			name = coding + "/JSON answers"
		}
		t.Run(name, func(t *testing.T) {
			srv := goSDKServer()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonAnswers})
			var mu sync.Mutex
			var encodings []string
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				encodings = append(encodings, r.Header.Get("Accept-Encoding"))
				mu.Unlock()
				compressResponses(t, coding, h).ServeHTTP(w, r)
			}))
			px := startHTTPProxy(t, up+"/mcp")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "gz", Version: "1"}, nil)
			tr := &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", DisableStandaloneSSE: true}
			if coding != "gzip" {
				tr.HTTPClient = &http.Client{Transport: decodingTransport{coding}}
			}
			cs, err := client.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range []string{"one", "two", "three"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != text {
					t.Errorf("call %d answered %q, want %q", i, got, text)
				}
			}
			call := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
			if !jsonAnswers { // go-sdk cannot send progress on a JSON answer
				call.SetProgressToken("p")
			}
			if _, err := cs.CallTool(ctx, call); err != nil {
				t.Fatal(err)
			}
			cs.Close()
			px.Stop()
			mu.Lock()
			if len(encodings) == 0 || !strings.Contains(encodings[0], coding) {
				t.Fatalf("upstream saw Accept-Encoding %q: the test needs a client that asks for %s", encodings, coding)
			}
			mu.Unlock()

			var texts []string
			progress := 0
			calls := map[string]bool{} // ids of tools/call requests not yet answered
			for _, sess := range readCassette(t, px.Cassette) {
				for _, m := range sess.msgs {
					s := jsonrpc.Classify(m.Frame)
					if s.Kind == jsonrpc.Malformed {
						t.Errorf("seq %d recorded malformed (compressed bytes?): %q", m.Seq, m.Frame)
						continue
					}
					switch {
					case s.Method == "notifications/progress":
						progress++
					case s.Method == "tools/call":
						if len(calls) > 0 {
							t.Errorf("seq %d: a request before the answer to %v was recorded", m.Seq, calls)
						}
						calls[s.ID] = true
					case s.Kind == jsonrpc.Response && calls[s.ID]:
						delete(calls, s.ID)
						if m.HTTP.ResponseHeader.Get("Content-Encoding") != coding {
							t.Errorf("seq %d: stored Content-Encoding %q, want %s (how it travelled)", m.Seq, m.HTTP.ResponseHeader.Get("Content-Encoding"), coding)
						}
						if i := bytes.Index(m.Frame, []byte(`"text":"`)); i >= 0 {
							texts = append(texts, string(m.Frame[i+8:i+8+bytes.IndexByte(m.Frame[i+8:], '"')]))
						}
					}
				}
			}
			if strings.Join(texts, ",") != "one,two,three,done 3 steps" {
				t.Errorf("recorded answers %q, want one,two,three,done decompressed", texts)
			}
			if len(calls) > 0 {
				t.Errorf("unanswered in the cassette: %v", calls)
			}
			if want := map[bool]int{false: 3, true: 0}[jsonAnswers]; progress != want {
				t.Errorf("recorded %d progress notifications, want %d", progress, want)
			}
		})
	}
}

// compress encodes b with a content coding, flushing the compressor after
// each part as a streaming server does after each event.
func compress(tb testing.TB, coding string, parts ...string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := encodeTo(tb, coding, &buf)
	for _, p := range parts {
		io.WriteString(zw, p)
		zw.Flush()
	}
	zw.Close()
	return buf.Bytes()
}

// A request body and an SSE answer that the peers compressed (gzip; or
// deflate, br or zstd, which Go's client does not undo by itself) reach
// the other side as sent and are recorded decompressed, each SSE event a
// frame. CDNs answer br and zstd to clients that accept them (browsers,
// curl --compressed, Python's httpx with brotli or zstandard installed).
func TestHTTPProxy_CompressedBodyAndStream(t *testing.T) {
	request := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		t.Run(coding, func(t *testing.T) {
			stream := compress(t, coding, "id: e1\ndata: "+progress+"\n\n", "id: e2\ndata: "+result+"\n\n")
			var got []byte
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", coding)
				w.Write(stream)
			}))
			px := startHTTPProxy(t, up+"/mcp")
			sent := compress(t, coding, request)
			req, _ := http.NewRequest("POST", px.URL+"/mcp", bytes.NewReader(sent))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", coding)
			req.Header.Set("Accept-Encoding", coding) // Go's client then leaves the answer as it came
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			px.Stop()
			if !bytes.Equal(got, sent) {
				t.Errorf("upstream got %q, want the compressed bytes as sent", got)
			}
			if !bytes.Equal(answer, stream) {
				t.Errorf("client got %q, want the compressed stream as sent", answer)
			}
			rs := readCassette(t, px.Cassette)
			if len(rs) != 1 {
				t.Fatalf("want one session, got %d", len(rs))
			}
			var frames []string
			for _, m := range rs[0].msgs {
				frames = append(frames, m.Dir.String()+" "+string(m.Frame))
			}
			want := []string{"c2s " + request, "s2c " + progress, "s2c " + result}
			if !slices.Equal(frames, want) {
				t.Errorf("recorded\n%q\nwant\n%q", frames, want)
			}
		})
	}
}

// A compressed stream mcpspy cannot read (a coding it does not know, or
// gzip or zstd that is corrupt) still reaches the client byte for byte and
// never stalls the relay; nothing of it is recorded as a message.
func TestHTTPProxy_UndecodableStream(t *testing.T) {
	junk := bytes.Repeat([]byte("\x1f\x8b\x08\x00not really gzip\n\n"), 4000)
	for _, coding := range []string{"compress", "gzip", "zstd"} {
		t.Run(coding, func(t *testing.T) {
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", coding)
				for chunk := range slices.Chunk(junk, 1000) {
					w.Write(chunk)
					w.(http.Flusher).Flush()
				}
			}))
			var logText syncbuf.Buffer
			px := startHTTPProxy(t, up+"/mcp", func(p *recorder.HTTPProxy) { p.Log = &logText })
			req, _ := http.NewRequest("POST", px.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Accept-Encoding", coding) // keeps Go's client from undoing gzip itself
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			px.Stop()
			if !bytes.Equal(got, junk) {
				t.Errorf("client got %d bytes, want the %d sent, unchanged", len(got), len(junk))
			}
			if !strings.Contains(logText.String(), coding+" stream on /mcp") {
				t.Errorf("log %q: want a warning naming the coding and the path", logText.String())
			}
			for _, s := range readCassette(t, px.Cassette) {
				for _, m := range s.msgs {
					if m.Dir == store.S2C {
						t.Errorf("recorded s2c frame %q from a stream that cannot be read", m.Frame)
					}
				}
			}
		})
	}
}
