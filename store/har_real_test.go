package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// harSchema is testdata/har-1.2.schema.json: HAR 1.2's required fields and
// their types, and no field the spec does not name but custom _ ones.
func harSchema(tb testing.TB) *jsonschema.Resolved {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "har-1.2.schema.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		tb.Fatal(err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

func validateHAR(tb testing.TB, rs *jsonschema.Resolved, doc []byte) error {
	tb.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		tb.Fatal(err)
	}
	return rs.Validate(v)
}

// Every HAR the builder tests make, and the shipped recording's, is a
// valid HAR 1.2; and the schema is no rubber stamp: it refuses what HAR
// 1.2 does not allow.
func TestBuildHAR_ValidHAR12(t *testing.T) {
	rs := harSchema(t)
	real, err := store.Load(filepath.Join("..", "cassettes", "everything-http.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, doc, _, _ := harOf(t, real)
	if err := validateHAR(t, rs, doc); err != nil {
		t.Errorf("everything-http's HAR: %v", err)
	}
	// Each builder case, and all of them in one archive.
	all := &store.Tape{}
	for _, tt := range harCases() {
		t.Run(tt.name, func(t *testing.T) {
			_, doc, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{tt.session}})
			if err := validateHAR(t, rs, doc); err != nil {
				t.Errorf("%v\n%s", err, doc)
			}
		})
		s := tt.session
		s.Info.ID = tt.name
		all.Sessions = append(all.Sessions, s)
	}
	if _, doc, _, _ := harOf(t, all); validateHAR(t, rs, doc) != nil {
		t.Errorf("every case in one HAR: %v", validateHAR(t, rs, doc))
	}

	breaks := []struct {
		name  string
		spoil func(log map[string]any)
	}{
		{"no log.version", func(l map[string]any) { delete(l, "version") }},
		{"version 1.1", func(l map[string]any) { l["version"] = "1.1" }},
		{"creator without version", func(l map[string]any) { delete(l["creator"].(map[string]any), "version") }},
		{"an unknown field", func(l map[string]any) { entry(l)["extra"] = 1 }},
		{"startedDateTime not ISO 8601", func(l map[string]any) { entry(l)["startedDateTime"] = "22/11/2026 06:28" }},
		{"negative time", func(l map[string]any) { entry(l)["time"] = -1 }},
		{"no cache", func(l map[string]any) { delete(entry(l), "cache") }},
		{"wait of -1", func(l map[string]any) { entry(l)["timings"].(map[string]any)["wait"] = -1 }},
		{"no queryString", func(l map[string]any) { delete(entry(l)["request"].(map[string]any), "queryString") }},
		{"a relative url", func(l map[string]any) { entry(l)["request"].(map[string]any)["url"] = "/mcp" }},
		{"status as a string", func(l map[string]any) { entry(l)["response"].(map[string]any)["status"] = "200" }},
		{"no content.mimeType", func(l map[string]any) {
			delete(entry(l)["response"].(map[string]any)["content"].(map[string]any), "mimeType")
		}},
		{"no redirectURL", func(l map[string]any) { delete(entry(l)["response"].(map[string]any), "redirectURL") }},
		{"a header without value", func(l map[string]any) {
			entry(l)["request"].(map[string]any)["headers"] = []any{map[string]any{"name": "Accept"}}
		}},
	}
	for _, tt := range breaks {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			var v map[string]any
			if err := json.Unmarshal(doc, &v); err != nil {
				t.Fatal(err)
			}
			tt.spoil(v["log"].(map[string]any))
			if err := rs.Validate(v); err == nil {
				t.Errorf("the schema accepts a HAR with %s", tt.name)
			}
		})
	}
}

func entry(log map[string]any) map[string]any {
	return log["entries"].([]any)[0].(map[string]any)
}

// The shipped recording of server-everything over Streamable HTTP: one
// entry per recorded POST, request bodies and JSON answers byte-equal to
// the recorded frames, and each SSE answer read back by mcpspy's own SSE
// parser gives the recorded frames, ids and types. The .db and its .jsonl
// twin give the same archive, which is kept as a golden file.
func TestBuildHAR_Recorded(t *testing.T) {
	tape, err := store.Load(filepath.Join("..", "cassettes", "everything-http.db"))
	if err != nil {
		t.Fatal(err)
	}
	f, doc, h, skipped := harOf(t, tape)
	if len(skipped) != 0 || h.Unplaced != 0 {
		t.Fatalf("skipped %v, %d unplaced", skipped, h.Unplaced)
	}
	msgs := tape.Sessions[0].Messages
	bySeq := map[uint64]*store.Message{}
	var posts []uint64
	for _, m := range msgs {
		bySeq[m.Seq] = m
		if m.Dir == store.C2S {
			posts = append(posts, m.Seq)
		}
	}
	var gotPosts []uint64
	placed := map[uint64]int{}
	info := tape.Sessions[0].Info
	bare := 0
	for i, e := range f.Log.Entries {
		x := e.MCPTape
		if e.Request.URL != info.Upstream {
			t.Errorf("entry %d: %s %s, want %s", i, e.Request.Method, e.Request.URL, info.Upstream)
		}
		if x.RequestSeq == 0 {
			// The GET stream that carried nothing and the DELETE, from
			// the session's info, in the order they came.
			if bare >= len(info.Bare) || info.Bare[bare].HTTP.Method != e.Request.Method || info.Bare[bare].HTTP.Status != e.Response.Status {
				t.Errorf("entry %d: %s answered %d, not the next of the session's bare exchanges %+v", i, e.Request.Method, e.Response.Status, info.Bare)
			}
			bare++
			continue
		}
		if e.Request.Method != "POST" {
			t.Errorf("entry %d: %s with request seq %d, want a POST", i, e.Request.Method, x.RequestSeq)
		}
		gotPosts = append(gotPosts, x.RequestSeq)
		req := bySeq[x.RequestSeq]
		if req == nil || e.Request.PostData == nil || e.Request.PostData.Text != string(req.Frame) {
			t.Errorf("entry %d: request body is not seq %d's frame", i, x.RequestSeq)
			continue
		}
		placed[x.RequestSeq]++
		if req.HTTP.StreamID != x.StreamID {
			t.Errorf("entry %d: stream %d, seq %d has %d", i, x.StreamID, x.RequestSeq, req.HTTP.StreamID)
		}
		if len(x.ResponseSeqs) == 0 {
			continue
		}
		// The answer, read back as a client would.
		var events []sse.Event
		err := sse.Messages(strings.NewReader(e.Response.Content.Text), 0, func(ev sse.Event) { events = append(events, ev) })
		if !errors.Is(err, io.EOF) {
			t.Errorf("entry %d: reading the SSE text: %v", i, err)
		}
		if len(events) != len(x.ResponseSeqs) {
			t.Errorf("entry %d: %d events in the text, %d response seqs", i, len(events), len(x.ResponseSeqs))
			continue
		}
		for j, seq := range x.ResponseSeqs {
			m := bySeq[seq]
			placed[seq]++
			ev := events[j]
			if m.HTTP.StreamID != x.StreamID || !bytes.Equal(ev.Data, m.Frame) || ev.ID != m.HTTP.EventID || ev.Type != m.HTTP.EventType {
				t.Errorf("entry %d event %d: data %.40q id %q type %q; seq %d recorded %.40q id %q type %q on stream %d",
					i, j, ev.Data, ev.ID, ev.Type, seq, m.Frame, m.HTTP.EventID, m.HTTP.EventType, m.HTTP.StreamID)
			}
		}
		if e.Response.Status != 200 || e.Response.Content.MimeType != "text/event-stream" {
			t.Errorf("entry %d: status %d, %s", i, e.Response.Status, e.Response.Content.MimeType)
		}
	}
	if d := cmp.Diff(posts, gotPosts); d != "" {
		t.Errorf("entries' request seqs (-recorded POSTs +got):\n%s", d)
	}
	if bare != len(info.Bare) || bare == 0 {
		t.Errorf("%d entries without messages, the session keeps %d bare exchanges (its DELETE at least)", bare, len(info.Bare))
	}
	for _, m := range msgs {
		if placed[m.Seq] != 1 {
			t.Errorf("seq %d is in %d entries, want 1", m.Seq, placed[m.Seq])
		}
	}

	twin, err := store.Load(filepath.Join("..", "cassettes", "everything-http.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, fromTwin, _, _ := harOf(t, twin); !bytes.Equal(doc, fromTwin) {
		t.Errorf("the .db and its .jsonl twin give different HARs")
	}
	// The shipped HAR twin is the golden file: make cassettes writes it
	// with mcpspy export --har, which names mcpspy's version as its
	// creator; the HAR built here names that version too.
	golden := filepath.Join("..", "cassettes", "everything-http.har")
	want, err := os.ReadFile(golden)
	if err != nil && !*update {
		t.Fatalf("%v (make cassettes, or go test -run TestBuildHAR_Recorded -update, writes it)", err)
	}
	var shipped struct {
		Log struct{ Creator struct{ Version string } }
	}
	if err == nil {
		if err := json.Unmarshal(want, &shipped); err != nil {
			t.Fatal(err)
		}
	}
	h, _ = store.BuildHAR(tape, shipped.Log.Creator.Version)
	var rebuilt bytes.Buffer
	if err := h.Write(&rebuilt); err != nil {
		t.Fatal(err)
	}
	doc = rebuilt.Bytes()
	if *update {
		if err := os.WriteFile(golden, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		want = doc
	}
	if d := cmp.Diff(string(want), string(doc)); d != "" {
		t.Errorf("HAR differs from %s (-want +got; -update rewrites it):\n%s", golden, d)
	}
}

// The shipped HAR, read back, is the recording it was exported from: the
// same messages in the same order, frames byte for byte, the same HTTP
// metadata (methods, paths, statuses, headers, streams, event ids), the
// same session info a replay introduces itself with. Times are to the
// millisecond for requests and for the first and last message of each
// answer; the events between are spread over the answer's time (a HAR
// keeps none of their own), in order. The session has no name (a HAR
// keeps none).
func TestLoad_ShippedHAR(t *testing.T) {
	recorded, err := store.Load(filepath.Join("..", "cassettes", "everything-http.db"))
	if err != nil {
		t.Fatal(err)
	}
	fromHAR, err := store.Load(filepath.Join("..", "cassettes", "everything-http.har"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fromHAR.Sessions) != 1 || len(recorded.Sessions) != 1 {
		t.Fatalf("sessions: %d from the HAR, %d recorded", len(fromHAR.Sessions), len(recorded.Sessions))
	}
	want, got := recorded.Sessions[0], fromHAR.Sessions[0]
	if len(got.Messages) != len(want.Messages) {
		t.Fatalf("%d messages from the HAR, %d recorded", len(got.Messages), len(want.Messages))
	}
	// The first and last seq of each answer's messages, by stream id.
	ends := map[uint64][2]uint64{}
	for _, w := range want.Messages {
		if w.Dir == store.S2C {
			e, ok := ends[w.HTTP.StreamID]
			if !ok {
				e[0] = w.Seq
			}
			e[1] = w.Seq
			ends[w.HTTP.StreamID] = e
		}
	}
	for i, w := range want.Messages {
		g := got.Messages[i]
		if g.Seq != w.Seq || g.Dir != w.Dir || !bytes.Equal(g.Frame, w.Frame) {
			t.Errorf("seq %d: %s %s, recorded %s %s", w.Seq, g.Dir, g.Frame, w.Dir, w.Frame)
			continue
		}
		if d := cmp.Diff(w.HTTP, g.HTTP); d != "" {
			t.Errorf("seq %d: HTTP metadata (-recorded +from the HAR):\n%s", w.Seq, d)
		}
		e := ends[w.HTTP.StreamID]
		timed := w.Dir == store.C2S || w.Seq == e[0] || w.Seq == e[1]
		if d := g.Time.Sub(w.Time); timed && (d < -time.Millisecond || d > time.Millisecond) {
			t.Errorf("seq %d at %v, recorded at %v", w.Seq, g.Time, w.Time)
		}
		if i > 0 && g.Time.Before(got.Messages[i-1].Time) {
			t.Errorf("seq %d at %v, before the message before it", w.Seq, g.Time)
		}
	}
	wi, gi := want.Info, got.Info
	if gi.Name != wi.Name || gi.Transport != wi.Transport || gi.Upstream != wi.Upstream || gi.HTTPSessionID != wi.HTTPSessionID ||
		gi.Handshake.Method != wi.Handshake.Method || gi.Handshake.ProtocolVersion != wi.Handshake.ProtocolVersion ||
		!bytes.Equal(gi.Handshake.ServerInfo, wi.Handshake.ServerInfo) || gi.Handshake.Instructions != wi.Handshake.Instructions {
		t.Errorf("session info from the HAR %+v, recorded %+v", gi, wi)
	}
	if len(gi.Bare) != len(wi.Bare) {
		t.Errorf("%d bare exchanges from the HAR, %d recorded", len(gi.Bare), len(wi.Bare))
	}
}
