package faults_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// gzipped compresses b, each 1 MiB piece as a gzip member of its own
// (a gzip stream may hold several, read as one), so that the pieces that
// repeat, which are most of a test frame, are compressed once: deflating
// 600 MiB in a race-built binary, as these tests once ran in, took half
// a minute.
func gzipped(b ...[]byte) []byte {
	const piece = 1 << 20
	members := map[string][]byte{}
	var out []byte
	for _, p := range b {
		for len(p) > 0 {
			n := min(piece, len(p))
			m, ok := members[string(p[:n])]
			if !ok {
				var buf bytes.Buffer
				zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
				zw.Write(p[:n])
				zw.Close()
				m = buf.Bytes()
				members[string(p[:n])] = m
			}
			out = append(out, m...)
			p = p[n:]
		}
	}
	return out
}

// gzipUpstream is bigUpstream with every answer gzipped: a POST asking
// for "big" gets a 64 MiB JSON answer, one asking for "bigsse" a stream
// of runFrames 64 MiB events, any other the length of the body it sent
// (after its first 256 bytes, as sent). The compressed answers are made
// once.
func gzipUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	var once sync.Once
	var json, events []byte
	made := func() {
		json = gzipped(bigFrame(1, frameSize))
		var evs [][]byte
		for id := 1; id <= runFrames; id++ {
			evs = append(evs, fmt.Appendf(nil, "data: %s\n\n", bigFrame(id, frameSize-len(sseFraming))))
		}
		events = gzipped(evs...)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusOK)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		head := make([]byte, 256)
		k, _ := io.ReadFull(body, head)
		// The rest is drained as it came, not decompressed: inflating
		// 64 MiB in a race-built binary took seconds a request.
		rest, _ := io.Copy(io.Discard, r.Body)
		once.Do(made)
		w.Header().Set("Content-Encoding", "gzip")
		switch {
		case bytes.Contains(head[:k], []byte(`"method":"bigsse"`)):
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(events)
		case bytes.Contains(head[:k], []byte(`"method":"big"`)):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(json)))
			w.Write(json)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write(gzipped(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":2,"result":{"len":%d}}`, int64(k)+rest)))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// gzipAsk are the headers of a client that takes gzipped answers (and
// Go's client leaves them compressed, as it gets them).
var gzipAsk = []string{"Accept-Encoding", "gzip"}

// A run of 64 MiB messages that travel compressed costs about what one
// does too: mcpspy records each decompressed, and the 64 MiB it makes of
// a few compressed KiB is a frame as large as any other.
func memoryRunOfBigFramesGzip(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpspy")
	up := gzipUpstream(t)
	bigAsk := []byte(`{"jsonrpc":"2.0","id":1,"method":"big"}`)
	httpRuns(t, bin, up.URL, "http gzip", []httpRunCase{
		{"c2s", func(addr string) error {
			body := gzipped(bigRequest(frameSize))
			for i := range runFrames {
				if _, err := postThrough(addr, body, append(gzipAsk, "Content-Encoding", "gzip")...); err != nil {
					return fmt.Errorf("POST %d: %w", i+1, err)
				}
			}
			return nil
		}, frameSize},
		{"s2c json", func(addr string) error {
			for i := range runFrames {
				if _, err := postThrough(addr, bigAsk, gzipAsk...); err != nil {
					return fmt.Errorf("POST %d: %w", i+1, err)
				}
			}
			return nil
		}, frameSize},
		{"s2c sse", func(addr string) error {
			_, err := postThrough(addr, []byte(`{"jsonrpc":"2.0","id":1,"method":"bigsse"}`), gzipAsk...)
			return err
		}, frameSize - len(sseFraming)},
	})
}
