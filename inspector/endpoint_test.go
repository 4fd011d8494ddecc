package inspector

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/mcptape/mcptape/store"
)

// writeLegacyCassette records one legacy HTTP+SSE (2024-11-05) session:
// the stream's endpoint event, an initialize and its answer, and a frame
// on the stream that is really broken.
func writeLegacyCassette(tb testing.TB) string {
	tb.Helper()
	event := func(typ string) *store.HTTPMeta {
		return &store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200, Stream: store.StreamLegacySSE, StreamID: 1, EventType: typ}
	}
	return writeHTTPSession(tb, "legacy.db", store.SessionInfo{Transport: store.TransportLegacySSE, Upstream: "http://server/sse"}, []metaFrame{
		{store.S2C, "/message?sessionId=4f2a", event("endpoint")},
		{store.C2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			&store.HTTPMeta{Method: "POST", Path: "/message?sessionId=4f2a", Status: 202, Stream: store.StreamPostBody, StreamID: 2}},
		{store.S2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, event("message")},
		{store.S2C, `{"jsonrpc":"2.0","id":`, event("message")},
	})
}

// TestModel_EndpointEvent: a legacy SSE stream's endpoint event, kept as
// a server frame that is no JSON, is shown as what it is, from the .db
// and from its JSONL export alike: kind sse, named by the URI to POST
// to, found by kind:endpoint, neither malformed nor an error; a broken
// frame on the same stream stays malformed.
func TestModel_EndpointEvent(t *testing.T) {
	path := writeLegacyCassette(t)
	for _, p := range []string{path, jsonlTwin(t, path)} {
		t.Run(filepath.Ext(p), func(t *testing.T) {
			m, src := openModel(t, p)
			if got := m.Sessions[0].Errors; got != 0 {
				t.Errorf("the session counts %d errors, want none", got)
			}
			var out bytes.Buffer
			if _, err := m.WriteText(context.Background(), &out, src, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 4 || !strings.Contains(lines[0], "← sse ") || !strings.HasSuffix(lines[0], " endpoint: POST to /message?sessionId=4f2a") ||
				!strings.Contains(lines[3], "← bad ") {
				t.Errorf("show:\n%s\nwant the first line the endpoint event, the last a malformed frame", out.String())
			}
			r, _ := m.ByIndex(0)
			if !r.Endpoint || r.EndpointURI != "/message?sessionId=4f2a" || r.PageStatus != 0 || kindColor(r) != tcell.ColorTeal {
				t.Errorf("row %+v, want an endpoint event", r)
			}
			for _, tt := range []struct {
				filter string
				want   []string
			}{
				{"kind:endpoint", []string{"s1:1"}},
				{"kind:malformed", []string{"s1:4"}},
				{"kind:endpoint|malformed", []string{"s1:1", "s1:4"}},
				{"!kind:endpoint dir:s2c", []string{"s1:3", "s1:4"}},
				{"error", nil},
				{"kind:http", nil},
			} {
				if got := filtered(t, m, src, tt.filter); !slices.Equal(got, tt.want) {
					t.Errorf("%s shows %v, want %v", tt.filter, got, tt.want)
				}
			}
			// The detail heading calls it what the table does.
			msg, err := src.Message(r.Ref)
			if err != nil {
				t.Fatal(err)
			}
			head := renderLines(Detail(r, msg, nil, false, nil)[:2])
			if !strings.Contains(head, "s1 #1  ←  sse  ") || !strings.Contains(head, "endpoint: POST to /message?sessionId=4f2a") || strings.Contains(head, "malformed") {
				t.Errorf("detail heading:\n%s\nwant kind sse and the URI", head)
			}
		})
	}
}

// TestFilter_KindSSE: kind:sse, the table's word for an endpoint event,
// is refused with the terms that say what it may mean.
func TestFilter_KindSSE(t *testing.T) {
	_, err := ParseFilter("kind:sse")
	if err == nil || !strings.Contains(err.Error(), "kind:endpoint") || !strings.Contains(err.Error(), "stream:legacy-sse") {
		t.Errorf("ParseFilter(kind:sse) = %v, want an error naming kind:endpoint and stream:legacy-sse", err)
	}
}
