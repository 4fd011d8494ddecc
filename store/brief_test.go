package store_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// HTTPBriefs gives, for the seqs asked, what HTTPMeta.Brief of the whole
// message gives: on a real Streamable HTTP recording (a 202 amended onto a
// notification included) and on a cassette of every kind of metadata (SSE
// event types, a legacy endpoint event's included), a chunked frame, a message without metadata and seqs that are not stored.
func TestReader_HTTPBriefs(t *testing.T) {
	real := peertest.CopyShipped(t, "everything-http.db")

	made := filepath.Join(t.TempDir(), "made.db")
	w := newWriter(t, made)
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	hdr := http.Header{"Mcp-Session-Id": {"a\"b"}, "X-Status": {`"status":999`}}
	for i, meta := range []*store.HTTPMeta{
		{Method: "POST", Path: "/mcp", Stream: store.StreamPostBody, StreamID: 1, RequestHeader: hdr},
		{Method: "POST", Path: "/mcp?status=1", Status: 200, Stream: store.StreamPostSSE, StreamID: 1, ResponseHeader: hdr, EventID: "e1", EventType: "message"},
		nil,
		{Method: "GET", Path: "/mcp", Status: 200, Stream: store.StreamGetSSE, StreamID: 2, Priming: []string{"p"}, EventType: "some \"future\" type"},
		{Method: "GET", Path: "/sse", Status: 200, Stream: store.StreamLegacySSE, StreamID: 4, EventType: "endpoint"},
		{Method: "POST", Path: "/mcp", Status: 429, Stream: store.StreamPostBody, StreamID: 3},
		{Method: "GET", Status: 101, Stream: store.StreamWS, WSOpcode: 1},
		{Method: "POST", Status: 200, Stream: "some-future-stream"},
		{Method: "POST", Status: 200, Stream: store.StreamJSON},
	} {
		frame := []byte(`{"jsonrpc":"2.0","method":"x"}`)
		if i == 8 {
			frame = []byte(`{"jsonrpc":"2.0","id":1,"result":{"b":"` + string(make([]byte, 3<<20)) + `"}}`) // stored in chunks
		}
		s.Append(store.S2C, at, frame, meta)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		path string
		seqs []uint64 // nil: every stored seq
	}{
		{"everything-http", real, nil},
		{"every kind of metadata", made, nil},
		{"gaps and seqs not stored", made, []uint64{2, 3, 5, 6, 9, 10, 40}},
		{"none", made, []uint64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tape, err := store.Load(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			msgs := tape.Sessions[0].Messages
			seqs := tc.seqs
			if seqs == nil {
				for _, m := range msgs {
					seqs = append(seqs, m.Seq)
				}
			}
			want := map[uint64]store.HTTPBrief{}
			for _, seq := range seqs {
				if seq <= uint64(len(msgs)) {
					want[seq] = msgs[seq-1].HTTP.Brief()
				}
			}
			got := map[uint64]store.HTTPBrief{}
			err = store.View(tc.path, func(r *store.Reader) error {
				return r.HTTPBriefs(tape.Sessions[0].Info.ID, seqs, func(seq uint64, b store.HTTPBrief) error {
					got[seq] = b
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("briefs (-want +got):\n%s", diff)
			}
			if b, ok := got[5]; tc.path == made && ok && b.EventType != "endpoint" {
				t.Errorf("seq 5's brief %+v, want the legacy endpoint event's type", b)
			}
		})
	}
}
