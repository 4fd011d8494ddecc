package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/store"
)

// bigExport is an export of n messages in two sessions, long enough to be
// read in several chunks.
func bigExport(tb testing.TB, n int) []byte {
	tb.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tape := &store.Tape{}
	for _, id := range []string{"s1", "s2"} {
		s := store.TapeSession{Info: store.SessionInfo{ID: id, Transport: store.TransportStdio, Start: t0}}
		for i := range n / 2 {
			s.Messages = append(s.Messages, &store.Message{
				Session: id, Seq: uint64(i + 1), Dir: store.Dir(i % 2), Time: t0.Add(time.Duration(i)),
				Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"padding padding padding padding"}}}`, i),
			})
		}
		s.Messages[3].Frame = []byte("not json\r") // a raw line
		tape.Sessions = append(tape.Sessions, s)
	}
	var b bytes.Buffer
	if err := store.WriteJSONL(&b, tape); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// TestReadJSONL_Chunks: an export read on several cores reads back as the
// same text, and an error far into it names the same line as a
// line-by-line read would.
func TestReadJSONL_Chunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	text := bigExport(t, 40_000)
	if len(text) < 4<<20 {
		t.Fatalf("export of %d bytes: too short for several chunks", len(text))
	}
	tape, err := store.ReadJSONL(bytes.NewReader(text), "big.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var back bytes.Buffer
	if err := store.WriteJSONL(&back, tape); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), text) {
		t.Fatal("export → read → export changed the text")
	}

	lines := strings.SplitAfter(string(text), "\n")
	tests := []struct {
		name string
		line int // 1-based
		edit func(string) string
		want string
	}{
		{"not json", 30_001, func(string) string { return "{oops\n" }, "not a JSON object: column 2: invalid character 'o'"},
		{"gap in seq", 25_000, func(l string) string { return strings.Replace(l, `"seq":`, `"seq":9`, 1) }, "want"},
		{"bad dir late", 39_999, func(l string) string {
			return strings.NewReplacer(`"c2s"`, `"up"`, `"s2c"`, `"up"`).Replace(l)
		}, `dir "up"`},
		{"blank lines before", 35_000, func(string) string { return "\n\n{oops\n" }, "not a JSON object"},
		{"cut short", 30_002, func(l string) string { return l[:40] + "\n" }, "not a JSON object: column 41: unexpected end of JSON input"},
		{"stray character", 30_003, func(l string) string { return strings.Replace(l, `"seq":`, `"seq":x`, 1) }, "not a JSON object: column "},
		{"an array", 30_004, func(string) string { return "[1,2]\n" }, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edited := append([]string(nil), lines...)
			edited[tt.line-1] = tt.edit(edited[tt.line-1])
			// A second error further on must not win.
			edited[len(edited)-2] = "{oops\n"
			_, err := store.ReadJSONL(strings.NewReader(strings.Join(edited, "")), "big.jsonl")
			line := tt.line
			if tt.name == "blank lines before" {
				line += 2
			}
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("big.jsonl:%d: ", line)) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want line %d and %q", err, line, tt.want)
			}
		})
	}
}

// TestReadJSONL_Pieces: text read in pieces, however the reader hands it
// over, reads as it does whole: lines across pieces, a line longer than a
// piece, no newline at the end. An error reading it is returned, named.
func TestReadJSONL_Pieces(t *testing.T) {
	text := bigExport(t, 20_000)
	lines := strings.SplitAfter(string(text), "\n")
	// A frame of 3 MB, as raw text: longer than a piece.
	long := strings.Replace(lines[5000], `"message":{"jsonrpc"`, `"raw":"`+strings.Repeat("x", 3<<20)+`","message":{"jsonrpc"`, 1)
	lines[5000] = long
	whole := strings.TrimSuffix(strings.Join(lines, ""), "\n")
	want, err := store.ReadJSONL(strings.NewReader(whole), "big.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var wantOut bytes.Buffer
	if err := store.WriteJSONL(&wantOut, want); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]io.Reader{
		"half":     iotest.HalfReader(strings.NewReader(whole)),
		"one byte": iotest.OneByteReader(strings.NewReader(whole[:strings.IndexByte(whole[200_000:], '\n')+200_001])),
		"data+EOF": iotest.DataErrReader(strings.NewReader(whole)),
	} {
		got, err := store.ReadJSONL(r, "big.jsonl")
		if name == "one byte" {
			if err != nil || len(got.Sessions) != 1 || len(got.Sessions[0].Messages) == 0 {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out bytes.Buffer
		if err := store.WriteJSONL(&out, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), wantOut.Bytes()) {
			t.Errorf("%s: read in pieces, the text reads otherwise", name)
		}
	}
	_, err = store.ReadJSONL(io.MultiReader(strings.NewReader(whole[:3<<20]), iotest.ErrReader(io.ErrClosedPipe)), "big.jsonl")
	if err == nil || !errors.Is(err, io.ErrClosedPipe) || !strings.HasPrefix(err.Error(), "big.jsonl: ") {
		t.Errorf("a read failing midway: %v", err)
	}
}

// oneMessageTape is a tape of one session per id, each with one message
// whose frame is frame.
func oneMessageTape(t *testing.T, frame string, ids ...string) *store.Tape {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tape := &store.Tape{}
	for _, id := range ids {
		tape.Sessions = append(tape.Sessions, store.TapeSession{
			Info:     store.SessionInfo{ID: id, Transport: store.TransportStdio, Start: t0},
			Messages: []*store.Message{{Session: id, Seq: 1, Dir: store.C2S, Time: t0, Frame: []byte(frame)}},
		})
	}
	return tape
}

// TestImport_TakenIDs: a session whose id the cassette holds already gets
// the next free id, after the sessions that keep theirs; the cassette's
// own sessions are left as they were.
func TestImport_TakenIDs(t *testing.T) {
	tests := []struct {
		name    string
		holds   []string // the cassette's sessions before the import
		imports []string // the tape's
		want    []string // the ids Import stored the tape's sessions under
	}{
		{"a new cassette keeps every id", nil, []string{"s5", "s2"}, []string{"s5", "s2"}},
		{"a taken id gets the next free one", []string{"s1"}, []string{"s1"}, []string{"s2"}},
		{"past every id the cassette holds", []string{"s1", "s2"}, []string{"s1"}, []string{"s3"}},
		{"free ids are kept before taken ones are renamed", []string{"s1"}, []string{"s1", "s2"}, []string{"s3", "s2"}},
		{"an id twice in the tape", nil, []string{"s1", "s1"}, []string{"s1", "s2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			// Each session's one message names the session it came as.
			before := &store.Tape{}
			for _, id := range tt.holds {
				before.Sessions = append(before.Sessions, oneMessageTape(t, `{"held":"`+id+`"}`, id).Sessions...)
			}
			if _, err := store.Import(path, before); err != nil {
				t.Fatal(err)
			}
			tape := &store.Tape{}
			for i, id := range tt.imports {
				tape.Sessions = append(tape.Sessions, oneMessageTape(t, fmt.Sprintf(`{"imported":%d}`, i), id).Sessions...)
			}
			got, err := store.Import(path, tape)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Import stored the sessions as %q, want %q", got, tt.want)
			}
			back, err := store.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			frames := map[string]string{}
			for _, s := range back.Sessions {
				frames[s.Info.ID] = string(s.Messages[0].Frame)
			}
			wantFrames := map[string]string{}
			for _, id := range tt.holds {
				wantFrames[id] = `{"held":"` + id + `"}`
			}
			for i, id := range tt.want {
				wantFrames[id] = fmt.Sprintf(`{"imported":%d}`, i)
			}
			if diff := cmp.Diff(wantFrames, frames); diff != "" {
				t.Errorf("%s holds (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestImport_NextSessionPastImportedIDs: a recording into a cassette after
// an import gets an id past every imported one, whatever order the tape
// held them in.
func TestImport_NextSessionPastImportedIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	if _, err := store.Import(path, oneMessageTape(t, `{}`, "s5", "s2")); err != nil {
		t.Fatal(err)
	}
	w := newWriter(t, path)
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "s6" {
		t.Errorf("new session after importing s5 and s2 into %s: %s, want s6", path, s.ID())
	}
}

// A header written by hand with an empty info, as a bug report may hold
// one, reads with what every listing shows of a session: the transport
// unknown, not blank, and the start its first message's time, not the
// year 1. A session with no message has no start to take. Import keeps
// what was read, and its export goes through import again unchanged.
func TestReadJSONL_EmptyInfo(t *testing.T) {
	const handWritten = `{"session":"s1","info":{}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session":"s2","info":{}}
`
	first := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tape, err := store.ReadJSONL(strings.NewReader(handWritten), "bug.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkFilled := func(t *testing.T, from string, infos []store.SessionInfo) {
		t.Helper()
		if len(infos) != 2 {
			t.Fatalf("%s: %d sessions, want 2", from, len(infos))
		}
		for _, info := range infos {
			want := first
			if info.ID == "s2" {
				want = time.Time{}
			}
			if info.Transport != store.TransportUnknown || !info.Start.Equal(want) {
				t.Errorf("%s: %s has transport %q, start %v; want %q, %v", from, info.ID, info.Transport, info.Start, store.TransportUnknown, want)
			}
		}
	}
	checkFilled(t, "ReadJSONL", []store.SessionInfo{tape.Sessions[0].Info, tape.Sessions[1].Info})

	dir := t.TempDir()
	db := filepath.Join(dir, "bug.db")
	if _, err := store.Import(db, tape); err != nil {
		t.Fatal(err)
	}
	var infos []store.SessionInfo
	if err := store.View(db, func(r *store.Reader) (err error) {
		infos, err = r.Sessions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	checkFilled(t, "the imported cassette", infos)
	var once, twice bytes.Buffer
	if err := store.Export(db, &once, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(once.String(), `{"session":"s1","info":{"transport":"unknown","upstream":"","start":"2026-11-21T10:00:00Z"}}`) {
		t.Errorf("the export's header does not carry what was read:\n%s", once.String())
	}
	back, err := store.ReadJSONL(bytes.NewReader(once.Bytes()), "export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteJSONL(&twice, back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(once.String(), twice.String()); d != "" {
		t.Errorf("export → read → export differs:\n%s", d)
	}
}

// A cassette an older mcpspy imported such a header into holds the empty
// info as it was; it reads as the JSONL does now.
func TestReader_EmptyInfoStored(t *testing.T) {
	db := filepath.Join(t.TempDir(), "old.db")
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	msg := &store.Message{Session: "s1", Seq: 1, Dir: store.C2S, Time: at, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}
	if _, err := store.Import(db, &store.Tape{Sessions: []store.TapeSession{{Info: store.SessionInfo{ID: "s1"}, Messages: []*store.Message{msg}}}}); err != nil {
		t.Fatal(err)
	}
	if err := store.View(db, func(r *store.Reader) error {
		info, err := r.Session("s1")
		if err != nil {
			return err
		}
		if info.Transport != store.TransportUnknown || !info.Start.Equal(at) {
			t.Errorf("Session: transport %q, start %v; want %q, %v", info.Transport, info.Start, store.TransportUnknown, at)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
