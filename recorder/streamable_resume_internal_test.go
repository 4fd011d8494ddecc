package recorder

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// brokenBody yields its text, then fails as a dropped connection does.
type brokenBody struct{ r io.Reader }

func (b *brokenBody) Read(p []byte) (int, error) {
	if n, _ := b.r.Read(p); n > 0 {
		return n, nil
	}
	return 0, io.ErrUnexpectedEOF
}

func (b *brokenBody) Close() error { return nil }

// discardTap keeps nothing.
type discardTap struct{}

func (discardTap) Append(store.Dir, time.Time, []byte, *store.HTTPMeta) uint64 { return 0 }

// A GET stream whose resume the server refuses is a note, not a request
// left unanswered; one that gave no event id is not resumed and no note.
func TestFollow_GETStreamLost(t *testing.T) {
	var (
		mu   sync.Mutex
		gets []string
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets = append(gets, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		http.Error(w, "gone", http.StatusBadRequest)
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	for _, tt := range []struct {
		name, stream string
		notes, gets  []string
	}{
		{"with an id", "id: g1\ndata:\n\n", []string{`the GET stream broke (unexpected EOF); resuming from event "g1": refused: HTTP 400: gone`}, []string{"g1"}},
		{"without", "data:\n\n", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			gets = nil
			mu.Unlock()
			var notes []string
			c := NewStreamableClient(StreamableOptions{URL: u, Timeout: time.Second, Tap: discardTap{}, Receive: func([]byte, string) {},
				Failed: func(id string, err error) { t.Errorf("request %s failed: %v", id, err) },
				Note:   func(n string) { notes = append(notes, n) }})
			defer c.Close()
			c.follow(&brokenBody{strings.NewReader(tt.stream)}, store.HTTPMeta{Method: http.MethodGet, Stream: "get-sse"}, &watch{ctx: c.ctx, resumable: true})
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(notes, "\n") != strings.Join(tt.notes, "\n") || strings.Join(gets, " ") != strings.Join(tt.gets, " ") {
				t.Errorf("notes %q, resumes %q\nwant %q, %q", notes, gets, tt.notes, tt.gets)
			}
		})
	}
}
