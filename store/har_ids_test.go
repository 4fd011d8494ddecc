package store_test

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// Over legacy SSE a POST's entry says which event answered it, however
// the answer wrote the request's id: 1.0 answers 1, "1" answers "\u0031".
func TestBuildHAR_LegacyAnswerIDWrittenAnotherWay(t *testing.T) {
	for _, tt := range []struct{ name, request, answer string }{
		{"an integer with a fraction", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.0,"result":{}}`},
		{"an escaped string", `{"jsonrpc":"2.0","id":"\u0031","method":"ping"}`, `{"jsonrpc":"2.0","id":"1","result":{}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			session := httpSession(store.TransportLegacySSE,
				httpMsg(1, store.S2C, 0, "/message?sessionId=abc", store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200,
					ResponseHeader: sseHeader, Stream: "legacy-sse", StreamID: 1, EventType: "endpoint"}),
				bare(httpMsg(2, store.C2S, 30, tt.request, store.HTTPMeta{Method: "POST", Path: "/message?sessionId=abc",
					RequestHeader: jsonHeader, Stream: "post-body", StreamID: 3}), 202, hdr("Content-Type", "text/plain", "Content-Length", "8"), ""),
				httpMsg(3, store.S2C, 31, tt.answer, store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200,
					ResponseHeader: sseHeader, Stream: "legacy-sse", StreamID: 1, EventType: "message"}))
			f, _, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{session}})
			var comments []string
			for _, e := range f.Log.Entries {
				if e.Request.Method == "POST" {
					comments = append(comments, e.Comment)
				}
			}
			if len(comments) != 1 || !strings.HasSuffix(comments[0], "its answer came on the SSE stream as seq 3") {
				t.Errorf("the POST's comments %q, want one that names its answer, seq 3", comments)
			}
		})
	}
}
