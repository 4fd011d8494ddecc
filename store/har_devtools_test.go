package store_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/store"
)

// testdata/devtools-chromium.har is what Chromium's own DevTools save
// ("Save all as HAR", sanitized, as the button does by default) of the
// page testdata/harmaker runs: their front end, attached to the page,
// wrote it. Besides what Playwright's HAR has, it lists the CORS
// preflights, counts the time a request was queued (blocked), and gives
// when each event of a stream came (_eventSourceMessages), at times some
// milliseconds off.

type devtoolsEntry struct {
	StartedDateTime time.Time `json:"startedDateTime"`
	Time            float64   `json:"time"`
	Request         struct {
		Method string `json:"method"`
	} `json:"request"`
	Timings struct {
		Receive float64 `json:"receive"`
	} `json:"timings"`
	Events []struct {
		Time    float64 `json:"time"`
		EventID string  `json:"eventId"`
	} `json:"_eventSourceMessages"`
}

// devtoolsSession is the session the page spoke, as DevTools saw it:
// the log on the GET stream came before tools/list.
var devtoolsSession = []string{
	"1 c2s initialize | POST /mcp 0 post-body#1",
	"2 s2c response 1 | POST /mcp 200 post-sse#1",
	"3 c2s notifications/initialized | POST /mcp 202 post-body#3",
	"4 s2c notifications/tools/list_changed | GET /mcp 200 get-sse#2",
	"5 s2c notifications/tools/list_changed | GET /mcp 200 get-sse#2",
	"6 s2c roots/list | GET /mcp 200 get-sse#2",
	"7 c2s response 0 | POST /mcp 202 post-body#4",
	"8 s2c notifications/message | GET /mcp 200 get-sse#2",
	"9 c2s tools/list | POST /mcp 0 post-body#5",
	"10 s2c response 2 | POST /mcp 200 post-sse#5",
	"11 c2s tools/call | POST /mcp 0 post-body#6",
	"12 s2c response 3 | POST /mcp 200 post-sse#6",
	"13 c2s tools/call | POST /mcp 0 post-body#7",
	"14 s2c notifications/progress | POST /mcp 200 post-sse#7",
	"15 s2c notifications/progress | POST /mcp 200 post-sse#7",
	"16 s2c notifications/progress | POST /mcp 200 post-sse#7",
	"17 s2c response 4 | POST /mcp 200 post-sse#7",
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// TestImportHAR_DevTools imports DevTools' HAR: the page and the
// preflights left out; the messages in the order they came, which the
// events' own times tell (the log on the GET stream came before
// tools/list, not at the stream's end); each answer's first message
// when the answer began, after the time the request was queued.
func TestImportHAR_DevTools(t *testing.T) {
	path := filepath.Join("testdata", "devtools-chromium.har")
	var mcp []devtoolsEntry
	preflights := 0
	for _, e := range harEntries[devtoolsEntry](t, path) {
		switch {
		case e.Request.Method == "OPTIONS":
			preflights++
		case e.Request.Method != "GET" || e.Events != nil:
			mcp = append(mcp, e)
		}
	}
	got := importPlaywright(t, path)
	if preflights == 0 || got.Skipped != 1+preflights || got.EmptyStreams != 0 || len(got.Sessions) != 1 {
		t.Fatalf("skipped %d, %d empty streams, %d sessions; want the page and %d preflights skipped, one session", got.Skipped, got.EmptyStreams, len(got.Sessions), preflights)
	}
	s := got.Sessions[0]
	if d := cmp.Diff(devtoolsSession, withoutEventIDs(listing(s))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if s.Info.Recorder != "HAR by WebInspector 537.36, imported by mcptape" || !strings.Contains(string(s.Messages[1].Frame), `"instructions":"# Everything Server – Server`) {
		t.Errorf("recorder %q, initialize answered %.300s", s.Info.Recorder, s.Messages[1].Frame)
	}

	// The answer to initialize, alone on its stream, came when its answer
	// began: after the time its request was queued, sent and waited for.
	init := mcp[0]
	began := init.StartedDateTime.Add(ms(init.Time - init.Timings.Receive))
	if d := s.Messages[1].Time.Sub(began); math.Abs(float64(d)) > float64(time.Millisecond) {
		t.Errorf("initialize answered at %v, want %v", s.Messages[1].Time, began)
	}
	// The long call's progress and answer came when DevTools saw them,
	// kept within the answer: DevTools may see its last events some
	// milliseconds after the answer's end.
	long := mcp[len(mcp)-2]
	began, end := long.StartedDateTime.Add(ms(long.Time-long.Timings.Receive)), long.StartedDateTime.Add(ms(long.Time))
	byID := map[string]time.Time{}
	for _, ev := range long.Events {
		byID[ev.EventID] = time.UnixMicro(int64(math.Round(ev.Time * 1e6)))
	}
	for _, m := range s.Messages[13:] {
		want := byID[m.HTTP.EventID]
		if want.Before(began) {
			want = began
		}
		if want.After(end) {
			want = end
		}
		if d := m.Time.Sub(want); math.Abs(float64(d)) > float64(time.Millisecond) {
			t.Errorf("seq %d at %v, want %v (DevTools saw it at %v)", m.Seq, m.Time, want, byID[m.HTTP.EventID])
		}
	}
}

// DevTools' HAR of a session still open, not sanitized: the GET stream has
// no text, but DevTools kept each of its events' data, which the import
// takes; nothing is missing. (Sanitized, DevTools leave the data out.)
func TestImportHAR_DevToolsOpenStream(t *testing.T) {
	got := importPlaywright(t, filepath.Join("testdata", "devtools-chromium-open.har"))
	if got.EmptyStreams != 0 || len(got.Sessions) != 1 {
		t.Fatalf("%d empty streams, %d sessions; want the GET stream's events from _eventSourceMessages, one session", got.EmptyStreams, len(got.Sessions))
	}
	s := got.Sessions[0]
	if d := cmp.Diff(devtoolsSession, withoutEventIDs(listing(s))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, m := range s.Messages {
		if h := m.HTTP; h.Stream == store.StreamGetSSE && (len(h.EventID) != 36 || h.EventType != "message") {
			t.Errorf("seq %d: event id %q, type %q", m.Seq, h.EventID, h.EventType)
		}
	}
	if len(s.Info.Bare) != 0 {
		t.Errorf("bare exchanges %+v: want none, the GET carried messages", s.Info.Bare)
	}

	// Sanitized, the same HAR holds the events' times, not their data:
	// the stream is missing, and said to be.
	raw, err := os.ReadFile(filepath.Join("testdata", "devtools-chromium-open.har"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range doc["log"].(map[string]any)["entries"].([]any) {
		evs, _ := e.(map[string]any)["_eventSourceMessages"].([]any)
		for _, ev := range evs {
			delete(ev.(map[string]any), "data")
		}
	}
	sanitized, _ := json.Marshal(doc)
	got, err = store.ImportHAR(bytes.NewReader(sanitized), "sanitized.har", store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.EmptyStreams != 1 || len(got.Sessions) != 1 || len(got.Sessions[0].Messages) != len(devtoolsSession)-4 {
		t.Errorf("sanitized: %d empty streams, %d messages; want the GET stream's 4 missing", got.EmptyStreams, len(got.Sessions[0].Messages))
	}
}
