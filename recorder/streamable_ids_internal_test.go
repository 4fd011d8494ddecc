package recorder

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// A POST's answer stream that breaks after the answer came is done with,
// however the answer wrote its request's id ("1" for "\u0031", 1.0 for
// 1): it is not resumed, and no request is reported failed.
func TestFollow_POSTStreamAnsweredIDWrittenAnotherWay(t *testing.T) {
	var resumes atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		resumes.Add(1)
		http.Error(w, "gone", http.StatusBadRequest)
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	for _, tt := range []struct{ name, request, answer string }{
		{"an escaped string id", `{"jsonrpc":"2.0","id":"\u0031","method":"ping"}`, `{"jsonrpc":"2.0","id":"1","result":{}}`},
		{"an integer id with a fraction", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.0,"result":{}}`},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"\u0032","method":"ping"}]`, `[{"jsonrpc":"2.0","id":1e0,"result":{}},{"jsonrpc":"2.0","id":"2","result":{}}]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resumes.Store(0)
			c := NewStreamableClient(StreamableOptions{URL: u, Timeout: time.Second, Tap: discardTap{}, Receive: func([]byte, string) {},
				Failed: func(id string, err error) { t.Errorf("request %s failed: %v", id, err) },
				Note:   func(string) {}})
			defer c.Close()
			frame := []byte(tt.request)
			stream := "id: e1\ndata: " + tt.answer + "\n\n"
			if strings.HasPrefix(tt.answer, "[") { // answers one by one, as server-everything does
				stream = ""
				jsonrpc.Elements([]byte(tt.answer), func(v []byte) { stream += "id: e\ndata: " + string(v) + "\n\n" })
			}
			w := &watch{post: true, ctx: c.ctx, pending: requestIDs(frame, jsonrpc.Classify(frame)), resumable: true}
			c.follow(&brokenBody{strings.NewReader(stream)}, store.HTTPMeta{Method: http.MethodPost, Stream: store.StreamPostSSE}, w)
			if n := resumes.Load(); n != 0 {
				t.Errorf("the answered stream was resumed %d times", n)
			}
		})
	}
}
