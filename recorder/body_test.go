package recorder_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// An upstream that compresses its answer (the client asked for gzip): the
// client gets the compressed bytes untouched, the cassette the message.
func TestHTTPProxy_GzipAnswerRecordedDecoded(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, answer)
		zw.Close()
	}))
	defer up.Close()
	px := startHTTPProxy(t, up.URL+"/mcp")
	req, _ := http.NewRequest(http.MethodPost, px.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the client then does not decompress
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" || len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Fatalf("client did not get the gzip bytes: %q %q", resp.Header.Get("Content-Encoding"), raw)
	}
	px.Stop()
	var s2c []string
	for _, s := range readCassette(t, px.Cassette) {
		for _, m := range s.msgs {
			if m.Dir == store.S2C {
				s2c = append(s2c, string(m.Frame))
			}
		}
	}
	if len(s2c) != 1 || s2c[0] != answer {
		t.Errorf("recorded answers %q, want the decompressed message", s2c)
	}
}
