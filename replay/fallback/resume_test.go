package fallback_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// TestFallback_ResumesABrokenStream: the answer stream of a call the
// fallback passed on to a go-sdk server (with an event store, so every
// event has an id) breaks after the first progress notification. The
// fallback resumes it with GET and Last-Event-ID, as a Streamable HTTP
// client should, and the live client gets all three progress
// notifications and the answer, not an error.
func TestFallback_ResumesABrokenStream(t *testing.T) {
	proxy := peertest.NewCutProxy(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("resume-go") },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	db := filepath.Join(t.TempDir(), "resume.db")
	fb := newFallback(t, fallback.Options{URL: proxy.URL, Record: db})
	srv := mocktest.New(t, []replay.Source{fb})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	c := connect(ctx, t, srv.Transport())
	if got := c.call(ctx, t, "slow", nil, mcp.Meta{"progressToken": "p1"}); got != "done" {
		t.Errorf("slow: %q, want done", got)
	}
	if got := fmt.Sprint(c.progressSteps(t, 3)); got != "[1 2 3]" {
		t.Errorf("progress %s, want [1 2 3]", got)
	}
	if !proxy.Cut() {
		t.Fatal("the proxy cut no stream")
	}
	if r := proxy.Resumed(); len(r) != 1 || r[0] == "" {
		t.Errorf("resumed from %q, want one resume from the event before the cut", r)
	}
	c.cs.Close()
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	// Recorded as a client sees it: the answer on the resumed GET stream,
	// whose request named the event it resumed from.
	var resumedAnswer bool
	for _, m := range sessions(t, db)[0].Messages {
		if m.Dir == store.S2C && m.HTTP != nil && m.HTTP.Stream == "get-sse" && m.HTTP.RequestHeader.Get("Last-Event-ID") != "" &&
			strings.Contains(string(m.Frame), `"done"`) {
			resumedAnswer = true
		}
	}
	if !resumedAnswer {
		t.Error("the recorded session has no answer on a resumed stream")
	}
}
