// Command memclient runs one of recorder's recording clients for the
// faults package's memory tests, built without the race detector (whose
// shadow memory would distort the peak RSS they measure) whatever the
// tests are built with.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// main runs one of recorder's recording clients, as mcpmock's
// fallback runs them, recording into the cassette MCPTAPE_CLIENT_DB: it
// posts a request for MCPTAPE_CLIENT_ASK to the server at
// MCPTAPE_CLIENT_URL MCPTAPE_CLIENT_POSTS times, takes MCPTAPE_BIG_N
// messages in all, says so, and ends. Without a URL it runs the bigrun
// server as a recorder.Child, which sends them unasked; a ws:// URL is
// dialled with DialWS, one whose path ends in /sse with DialLegacy, any
// other with a StreamableClient.
func main() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
	u, err := url.Parse(os.Getenv("MCPTAPE_CLIENT_URL"))
	if err != nil {
		fail(err)
	}
	n, posts := envInt("MCPTAPE_BIG_N", 8), envInt("MCPTAPE_CLIENT_POSTS", 1)
	ask := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q}`, os.Getenv("MCPTAPE_CLIENT_ASK"))
	w, err := store.NewWriter(os.Getenv("MCPTAPE_CLIENT_DB"), store.WriterOptions{})
	if err != nil {
		fail(err)
	}
	sess, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP, Upstream: u.String()})
	if err != nil {
		fail(err)
	}
	got := make(chan int, n)
	receive := func(f []byte) { got <- len(f) }
	var post func() error
	var end func()
	switch {
	case u.String() == "":
		// recorder.Child, running the faults test binary as the bigrun
		// server.
		c, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"env", "MCPTAPE_FAKE_SERVER=bigrun", os.Getenv("MCPTAPE_CLIENT_SERVER")},
			Stderr: os.Stderr, Tap: sess}, receive)
		if err != nil {
			fail(err)
		}
		posts, end = 0, func() { c.Close() }
	case recorder.IsWebSocketURL(u):
		c, err := recorder.DialWS(context.Background(), recorder.WSOptions{URL: u, Tap: sess, Receive: receive})
		if err != nil {
			fail(err)
		}
		post, end = func() error { return c.Send(ask) }, func() { c.Close() }
	case strings.HasSuffix(u.Path, "/sse"):
		c, err := recorder.DialLegacy(recorder.LegacyOptions{URL: u, Client: http.DefaultClient, Tap: sess, Receive: receive})
		if err != nil {
			fail(err)
		}
		post, end = func() error { return c.Post(ask) }, func() { c.Close() }
	default:
		c := recorder.NewStreamableClient(recorder.StreamableOptions{URL: u, Client: http.DefaultClient, Tap: sess,
			Receive: func(f []byte, _ string) { receive(f) }})
		post, end = func() error { return c.Post(ask, nil, nil) }, func() { c.Close() }
	}
	for range posts {
		if err := post(); err != nil {
			fail(err)
		}
	}
	for range n {
		select {
		case <-got:
		case <-time.After(time.Minute):
			fail(fmt.Errorf("fewer than %d messages came", n))
		}
	}
	end()
	if err := sess.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
		fail(err)
	}
	if err := w.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, "client: done")
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
