package store_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// The HARs in testdata/playwright-* were written by headless Chromium,
// driven by Playwright's recordHar, while a web page spoke MCP by hand
// with fetch() to server-everything (testdata/harmaker says how, and
// what those HARs are like).

// playwrightEntry is what the tests check an imported message against:
// an entry of the HAR as Playwright wrote it.
type playwrightEntry struct {
	StartedDateTime time.Time `json:"startedDateTime"`
	Request         struct {
		Method   string `json:"method"`
		PostData *struct {
			Text string `json:"text"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status  int `json:"status"`
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"response"`
	Timings struct {
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	} `json:"timings"`
}

// harEntries reads the entries of the HAR at path as E.
func harEntries[E any](t *testing.T, path string) []E {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Log struct{ Entries []E } `json:"log"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Log.Entries
}

func importPlaywright(t *testing.T, path string) *store.HARImport {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := store.ImportHAR(f, path, store.HARImportOptions{Redact: recorder.NewHTTPRedactor(nil), Files: os.DirFS(filepath.Dir(path))})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// playwrightSession is the session the page spoke, message by message,
// with where each travelled (as listing writes it, without event ids).
var playwrightSession = []string{
	"1 c2s initialize | POST /mcp 0 post-body#1",
	"2 s2c response 1 | POST /mcp 200 post-sse#1",
	"3 c2s notifications/initialized | POST /mcp 202 post-body#3",
	"4 s2c notifications/tools/list_changed | GET /mcp 200 get-sse#2",
	"5 s2c notifications/tools/list_changed | GET /mcp 200 get-sse#2",
	"6 s2c roots/list | GET /mcp 200 get-sse#2",
	"7 c2s response 0 | POST /mcp 202 post-body#4",
	"8 c2s tools/list | POST /mcp 0 post-body#5",
	"9 s2c response 2 | POST /mcp 200 post-sse#5",
	"10 c2s tools/call | POST /mcp 0 post-body#6",
	"11 s2c response 3 | POST /mcp 200 post-sse#6",
	"12 c2s tools/call | POST /mcp 0 post-body#7",
	"13 s2c notifications/progress | POST /mcp 200 post-sse#7",
	"14 s2c notifications/progress | POST /mcp 200 post-sse#7",
	"15 s2c notifications/progress | POST /mcp 200 post-sse#7",
	"16 s2c response 4 | POST /mcp 200 post-sse#7",
	"17 s2c notifications/message | GET /mcp 200 get-sse#2",
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// withoutEventIDs is listing's lines without what follows " id=".
func withoutEventIDs(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, " id=")
	}
	return out
}

// TestImportHAR_Playwright imports what Chromium wrote: one session, its
// messages in the order they came, each with its HTTP metadata; every
// SSE event taken apart with its id, priming events on the message after
// them; times from the entries' timings; the page itself left out, and
// the DELETE, which carried no message, kept bare.
func TestImportHAR_Playwright(t *testing.T) {
	path := filepath.Join("testdata", "playwright-chromium.har")
	got := importPlaywright(t, path)
	if got.Skipped != 1 || got.EmptyStreams != 0 || len(got.Sessions) != 1 {
		t.Fatalf("skipped %d, %d empty streams, %d sessions; want the page skipped and one session", got.Skipped, got.EmptyStreams, len(got.Sessions))
	}
	s := got.Sessions[0]
	if d := cmp.Diff(playwrightSession, withoutEventIDs(listing(s))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	entries := harEntries[playwrightEntry](t, path)
	sid := s.Info.HTTPSessionID
	if len(sid) != 36 || s.Info.Transport != store.TransportHTTP || !strings.HasPrefix(s.Info.Upstream, "http://127.0.0.1:") ||
		s.Info.Recorder != "HAR by Playwright 1.65.1, imported by mcptape" || !s.Info.Start.Equal(entries[1].StartedDateTime) {
		t.Errorf("session info %+v", s.Info)
	}
	if len(s.Info.Bare) != 1 || s.Info.Bare[0].HTTP.Method != http.MethodDelete || s.Info.Bare[0].HTTP.Status != 200 ||
		s.Info.Bare[0].HTTP.RequestHeader.Get("Mcp-Session-Id") != sid || !s.Info.Bare[0].Time.Equal(entries[8].StartedDateTime) {
		t.Errorf("bare exchanges %+v: want the DELETE of session %s", s.Info.Bare, sid)
	}

	// Each message is its entry's request body, or an event of its
	// answer, with the id that event had; a priming event (an id and no
	// data) is on the message after it. Requests carry the session's id
	// from the second on, and its answers say it too.
	byStream := map[uint64]playwrightEntry{}
	for _, e := range entries[1:] {
		byStream[uint64(len(byStream)+1)] = e
	}
	for _, m := range s.Messages {
		h := m.HTTP
		e := byStream[h.StreamID]
		if m.Dir == store.C2S {
			if e.Request.PostData == nil || e.Request.PostData.Text != string(m.Frame) || !m.Time.Equal(e.StartedDateTime) {
				t.Errorf("seq %d: not entry %d's request body, at its start %v: %s at %v", m.Seq, h.StreamID+1, e.StartedDateTime, m.Frame, m.Time)
			}
		} else {
			// A frame that is not ASCII is in the text misread (see
			// TestImportHAR_PlaywrightEventStreamUTF8).
			event := "id: " + h.EventID + "\ndata: " + string(m.Frame) + "\n\n"
			if !isASCII(m.Frame) {
				event = "id: " + h.EventID + "\ndata: {"
			}
			if h.EventType != "message" || !strings.Contains(e.Response.Content.Text, "event: message\n"+event) {
				t.Errorf("seq %d: event %q, type %q, is not in entry %d's text", m.Seq, event, h.EventType, h.StreamID+1)
			}
			for _, p := range h.Priming {
				if !strings.Contains(e.Response.Content.Text, "id: "+p+"\ndata: \n\n"+"event: message\n"+event) {
					t.Errorf("seq %d: priming event %s is not the one before it", m.Seq, p)
				}
			}
			if h.Stream == store.StreamPostSSE && len(h.Priming) == 0 && strings.HasPrefix(e.Response.Content.Text, "id: "+h.EventID) {
				t.Errorf("seq %d: the stream's priming event is lost", m.Seq)
			}
		}
		if h.StreamID > 1 && (h.RequestHeader.Get("Mcp-Session-Id") != sid || h.RequestHeader.Get("MCP-Protocol-Version") != "2025-11-25") {
			t.Errorf("seq %d: request headers %v, want session %s", m.Seq, h.RequestHeader, sid)
		}
		if ua := h.RequestHeader.Get("User-Agent"); !strings.Contains(ua, "HeadlessChrome/") || h.RequestHeader.Get("Origin") == "" {
			t.Errorf("seq %d: User-Agent %q, Origin %q: want the browser's", m.Seq, ua, h.RequestHeader.Get("Origin"))
		}
		if m.Dir == store.S2C && (h.ResponseHeader.Get("Mcp-Session-Id") != sid || h.ResponseHeader.Get("Content-Type") != "text/event-stream") {
			t.Errorf("seq %d: response headers %v", m.Seq, h.ResponseHeader)
		}
	}

	// Times: an answer's events spread over its receive time, the first
	// when the answer began, the last when it ended (to the millisecond,
	// as the HAR keeps them).
	long := byStream[7]
	first := long.StartedDateTime.Add(time.Duration(long.Timings.Wait * float64(time.Millisecond)))
	last := first.Add(time.Duration(long.Timings.Receive * float64(time.Millisecond)))
	for seq, want := range map[uint64]time.Time{13: first, 16: last} {
		if d := s.Messages[seq-1].Time.Sub(want); d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("seq %d at %v, want %v", seq, s.Messages[seq-1].Time, want)
		}
	}
	for i := 1; i < len(s.Messages); i++ {
		if s.Messages[i].Time.Before(s.Messages[i-1].Time) {
			t.Errorf("seq %d at %v, before seq %d", i+1, s.Messages[i].Time, i)
		}
	}
	del := entries[8]
	if end := s.Info.End; end == nil || end.Reason != store.EndClosed || !end.Time.Equal(del.StartedDateTime.Add(time.Duration(del.Timings.Wait*float64(time.Millisecond)))) {
		t.Errorf("end %+v, want closed when the DELETE was answered", end)
	}
}

// The text Chromium gives DevTools, and so Playwright, for an event
// stream without a charset is decoded as windows-1252, though SSE is
// UTF-8: server-everything's "–" and "🎉" in its instructions read
// "â€“" and "ðŸŽ‰". The import reads back the UTF-8 the server sent, so a
// replay gives the client what it got live.
func TestImportHAR_PlaywrightEventStreamUTF8(t *testing.T) {
	tape, err := store.LoadHAR(filepath.Join("testdata", "playwright-chromium.har"))
	if err != nil {
		t.Fatal(err)
	}
	h := tape.Sessions[0].Info.Handshake
	if !strings.HasPrefix(h.Instructions, "# Everything Server – Server Instructions") || !strings.Contains(h.Instructions, "respond with \"🎉 Server") {
		t.Errorf("instructions %.60q…, want server-everything's own text", h.Instructions)
	}
	if h.ProtocolVersion != "2025-11-25" || string(h.ClientInfo) != `{"name":"harmaker-page","version":"1.0.0"}` ||
		string(h.ServerInfo) != `{"name":"mcp-servers/everything","title":"Everything Reference Server","version":"2.0.0"}` {
		t.Errorf("handshake %+v", h)
	}
}

// Which event-stream texts are read back as UTF-8: a browser's text of a
// stream without a charset, misread as windows-1252; not one the header
// says is UTF-8, nor one that was never UTF-8 misread (a lone "é"), nor
// base64 (the bytes themselves), nor mcpspy's own export.
func TestImportHAR_EventStreamCharset(t *testing.T) {
	// "Ё" is D0 81: 0x81 is one of the bytes windows-1252 leaves as
	// U+0081.
	const sent = `{"jsonrpc":"2.0","id":1,"result":{"text":"a – b 🎉 é Ё"}}`
	const misread = `{"jsonrpc":"2.0","id":1,"result":{"text":"a â€“ b ðŸŽ‰ Ã© Ð` + "\u0081" + `"}}`
	entry := func(contentType, content, extra string) string {
		ct, _ := json.Marshal(contentType)
		return `{"log":{"entries":[{"startedDateTime":"2026-11-28T10:00:00Z",
			"request":{"method":"POST","url":"http://h/mcp","postData":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}"}},
			"response":{"status":200,"headers":[{"name":"content-type","value":` + string(ct) + `}],"content":` + content + `}` + extra + `}]}}`
	}
	text := func(s string) string {
		b, _ := json.Marshal(map[string]string{"mimeType": "text/event-stream", "text": "data: " + s + "\n\n"})
		return string(b)
	}
	b64 := func(s string) string {
		return `{"mimeType":"text/event-stream","encoding":"base64","text":"` + base64.StdEncoding.EncodeToString([]byte("data: "+s+"\n\n")) + `"}`
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"no charset, misread", entry("text/event-stream", text(misread), ""), sent},
		{"a charset other than UTF-8, misread", entry("text/event-stream; charset=ISO-8859-1", text(misread), ""), sent},
		{"no charset, read right", entry("text/event-stream", text(sent), ""), sent},
		{"latin-1 text that is no UTF-8", entry("text/event-stream", text(`{"text":"é"}`), ""), `{"text":"é"}`},
		{"charset=utf-8", entry("text/event-stream; charset=utf-8", text(misread), ""), misread},
		{"base64", entry("text/event-stream", b64(misread), ""), misread},
		{"mcpspy's export", entry("text/event-stream", text(misread), `,"_mcptape":{"session":"s1","stream_id":1,"request_seq":1,"response_seqs":[2]}`), misread},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := store.ImportHAR(strings.NewReader(tc.doc), "x.har", store.HARImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Sessions) != 1 || len(got.Sessions[0].Messages) != 2 {
				t.Fatalf("sessions %+v", got.Sessions)
			}
			if f := string(got.Sessions[0].Messages[1].Frame); f != tc.want {
				t.Errorf("frame %q, want %q", f, tc.want)
			}
		})
	}
}

// A HAR saved while the session and its GET stream were still open (a
// user who saves it while the app runs): the stream has no text, which
// the import counts; what it carried is missing (the client's answer to
// roots/list is there, the request it answers is not), and the GET is
// kept bare, saying its text was not saved.
func TestImportHAR_PlaywrightOpenStream(t *testing.T) {
	got := importPlaywright(t, filepath.Join("testdata", "playwright-chromium-open.har"))
	if got.Skipped != 1 || got.EmptyStreams != 1 || len(got.Sessions) != 1 {
		t.Fatalf("skipped %d, %d empty streams, %d sessions; want the page skipped, the GET stream counted, one session", got.Skipped, got.EmptyStreams, len(got.Sessions))
	}
	s := got.Sessions[0]
	var want []string
	for _, l := range withoutSeqs(playwrightSession) {
		if !strings.Contains(l, "GET") {
			want = append(want, l)
		}
	}
	if d := cmp.Diff(want, withoutSeqs(withoutEventIDs(listing(s)))); d != "" {
		t.Errorf("(-want, less the GET stream's, +got):\n%s", d)
	}
	if len(s.Info.Bare) != 1 || s.Info.Bare[0].HTTP.Method != http.MethodGet || s.Info.Bare[0].Note != "imported from a HAR: the text of its event stream is not in the HAR (still open when the HAR was saved?)" {
		t.Errorf("bare exchanges %+v: want the GET, saying its stream's text is missing", s.Info.Bare)
	}
}

// withoutSeqs is listing's lines without their seqs.
func withoutSeqs(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		_, out[i], _ = strings.Cut(l, " ")
	}
	return out
}

// Playwright's content: "attach" keeps each body in a file beside the HAR
// (_file), the text fields empty: the import reads them there, and gets
// what the embedded HAR of the same run of the page gives.
func TestImportHAR_PlaywrightAttached(t *testing.T) {
	embedded := importPlaywright(t, filepath.Join("testdata", "playwright-chromium.har"))
	attached := importPlaywright(t, filepath.Join("testdata", "playwright-attach", "playwright-chromium.har"))
	if attached.Skipped != 1 || attached.EmptyStreams != 0 || len(attached.Sessions) != 1 {
		t.Fatalf("skipped %d, %d empty streams, %d sessions", attached.Skipped, attached.EmptyStreams, len(attached.Sessions))
	}
	a, e := attached.Sessions[0], embedded.Sessions[0]
	if d := cmp.Diff(withoutEventIDs(listing(e)), withoutEventIDs(listing(a))); d != "" {
		t.Errorf("(-embedded +attached):\n%s", d)
	}
	for i, m := range a.Messages {
		if !bytes.Equal(m.Frame, e.Messages[i].Frame) {
			t.Errorf("seq %d: %.80s, embedded %.80s", m.Seq, m.Frame, e.Messages[i].Frame)
		}
	}
}

// A body in a file of its own that cannot be read is an error naming the
// entry and the file, and saying where Playwright keeps them.
func TestImportHAR_AttachedFileErrors(t *testing.T) {
	doc := func(file string) string {
		return `{"log":{"entries":[{"startedDateTime":"2026-11-28T10:00:00Z","request":{"method":"POST","url":"http://h/mcp","postData":{"text":"","_file":"` + file + `"}},"response":{"status":202,"content":{"size":-1,"mimeType":"x-unknown"}}}]}}`
	}
	files := fstest.MapFS{"body.json": {Data: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)}}
	for _, tc := range []struct {
		name, doc string
		files     fs.FS
		want      string
	}{
		{"a file not there", doc("gone.json"), files, `x.har: entry 1: request body: _file: open gone.json: file does not exist (Playwright's recordHar with content "attach" keeps bodies in files beside the HAR)`},
		{"a file elsewhere", doc("../body.json"), files, `x.har: entry 1: request body: _file "../body.json" names no file beside the HAR`},
		{"no files to read", doc("body.json"), nil, `x.har: entry 1: request body: it is in _file "body.json", and no files beside the HAR are read here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := store.ImportHAR(strings.NewReader(tc.doc), "x.har", store.HARImportOptions{Files: tc.files})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	got, err := store.ImportHAR(strings.NewReader(doc("body.json")), "x.har", store.HARImportOptions{Files: files})
	if err != nil || len(got.Sessions) != 1 || string(got.Sessions[0].Messages[0].Frame) != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
		t.Errorf("with its file there: %v, %+v", err, got)
	}
}
