package inspector

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// writeErrorsCassette records, over Streamable HTTP, one session with
// each thing that may look like an error: a 404 error page, a malformed
// frame from the client, a JSON-RPC error, an isError result.
func writeErrorsCassette(tb testing.TB) string {
	tb.Helper()
	post := func(status int, stream string) *store.HTTPMeta {
		return &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: status, Stream: stream}
	}
	return writeHTTPSession(tb, "errs.db", store.SessionInfo{Transport: store.TransportHTTP, Upstream: "http://server/"}, []metaFrame{
		{store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, post(404, store.StreamPostBody)},
		{store.S2C, "<html><pre>Cannot POST /nope</pre></html>", post(http.StatusNotFound, store.StreamJSON)},
		{store.C2S, `{"jsonrpc":`, post(400, store.StreamPostBody)},
		{store.S2C, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`, post(400, store.StreamJSON)},
		{store.C2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}}`, post(0, store.StreamPostBody)},
		{store.S2C, `{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`, post(200, store.StreamJSON)},
		{store.C2S, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, post(0, store.StreamPostBody)},
		{store.S2C, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`, post(200, store.StreamJSON)},
	})
}

// TestModel_ErrorPagesAgree: the sessions pane's error count, the error
// term and the kind term agree on what an error page is: an error, of
// kind http, not a malformed message; a malformed frame is no error.
func TestModel_ErrorPagesAgree(t *testing.T) {
	m, src := openModel(t, writeErrorsCassette(t))
	if got := m.Sessions[0].Errors; got != 4 {
		t.Errorf("the session counts %d errors, want 4 (the page, two JSON-RPC errors, the isError result)", got)
	}
	tests := []struct {
		filter string
		want   []uint64 // seqs
	}{
		{"error", []uint64{2, 4, 6, 8}},
		{"kind:http", []uint64{2}},
		{"kind:malformed", []uint64{3}},
		{"kind:malformed|http", []uint64{2, 3}},
		{"!kind:http dir:s2c", []uint64{4, 6, 8}},
		{"kind:error", []uint64{4, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.SetFilter(f, src); err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for i := range m.Visible() {
				r, _ := m.Row(i)
				got = append(got, r.Seq)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s shows %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
	// The detail heading calls the page what the table does.
	r, _ := m.ByIndex(1)
	msg, err := src.Message(r.Ref)
	if err != nil {
		t.Fatal(err)
	}
	head := renderLines(Detail(r, msg, nil, false, nil)[:2])
	if !strings.Contains(head, "s1 #2  ←  http  ") || !strings.Contains(head, "404 Not Found (error page") || strings.Contains(head, "malformed") {
		t.Errorf("detail heading:\n%s\nwant kind http and the status", head)
	}
}
