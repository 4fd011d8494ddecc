package peertest

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcptape/mcptape/internal/sse"
)

// CutProxy is a reverse proxy to a real Streamable HTTP server that breaks
// the first POST answer stream carrying a progress notification right
// after that event: the client's connection drops mid-stream (no clean
// end), and the server sees its client go. It notes the Last-Event-ID of
// every GET, so a test can tell whether, and from where, a client resumed.
type CutProxy struct {
	// URL is the proxied endpoint, /mcp.
	URL     *url.URL
	mu      sync.Mutex
	resumes []string
	cut     atomic.Bool
}

var errCut = errors.New("cut by the test proxy")

// NewCutProxy serves upstream on 127.0.0.1 behind the proxy; both stop
// when the test ends.
func NewCutProxy(t testing.TB, upstream http.Handler) *CutProxy {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	target, _ := url.Parse(up.URL)
	p := &CutProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodPost && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && !p.cut.Load() {
			resp.Body = &cutBody{src: resp.Body, rd: sse.NewReader(resp.Body, 0), cut: &p.cut}
		}
		return nil
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Last-Event-ID"); r.Method == http.MethodGet && id != "" {
			p.mu.Lock()
			p.resumes = append(p.resumes, id)
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r) // a body read error mid-copy aborts the client's connection
	}))
	t.Cleanup(ts.Close)
	p.URL, _ = url.Parse(ts.URL + "/mcp")
	return p
}

// Resumed lists the Last-Event-ID of each GET, in order.
func (p *CutProxy) Resumed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.resumes)
}

// Cut says whether a stream has been broken.
func (p *CutProxy) Cut() bool { return p.cut.Load() }

// cutBody passes events through until it has passed one that carries a
// progress notification (the first such in the proxy's life), then fails.
type cutBody struct {
	src  io.ReadCloser
	rd   *sse.Reader
	buf  []byte
	done bool
	cut  *atomic.Bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.done {
			return 0, errCut
		}
		ev, err := b.rd.Next()
		if err != nil {
			return 0, err
		}
		b.buf = ev.Raw
		b.done = bytes.Contains(ev.Data, []byte(`"notifications/progress"`)) && b.cut.CompareAndSwap(false, true)
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.src.Close() }
