package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
	bolt "go.etcd.io/bbolt"
)

func newWriter(t *testing.T, path string) *store.Writer {
	t.Helper()
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// oddFrames are frames a proxy must keep byte for byte.
var oddFrames = [][]byte{
	[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
	[]byte(`{ "id" : "1" , "result":{ "x":"\u00e9<&>" } ,"jsonrpc":"2.0"}`),
	[]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}` + "\r"),
	[]byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"result\": {}\n}"),
	[]byte(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`),
	[]byte("not json at all"),
	{0xff, 0xfe, '{', '}'},
	[]byte(`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope"}}`),
	// Over the chunk size, and not a multiple of it: stored in pieces.
	[]byte(`{"jsonrpc":"2.0","id":6,"result":{"blob":"` + strings.Repeat("Z", 5<<19+17) + `"}}`),
}

func TestCassette_AppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s, err := w.NewSession(store.SessionInfo{Name: "demo", Transport: store.TransportStdio, Upstream: "srv --flag"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)
	meta := &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, RequestHeader: http.Header{"Accept": {"text/event-stream"}}, EventID: "e1"}
	for i, f := range oddFrames {
		var m *store.HTTPMeta
		if i == 1 {
			m = meta
		}
		if seq := s.Append(store.Dir(i%2), t0.Add(time.Duration(i)), f, m); seq != uint64(i+1) {
			t.Fatalf("Append #%d returned seq %d", i, seq)
		}
	}
	code := 0
	if err := s.End(store.EndInfo{Reason: store.EndEOF, ExitCode: &code}); err != nil {
		t.Fatal(err)
	}

	err = store.View(path, func(r *store.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		if len(infos) != 1 || infos[0].ID != "s1" || infos[0].Name != "demo" || infos[0].End == nil || infos[0].End.Reason != "eof" {
			t.Errorf("sessions = %+v", infos)
		}
		if got := r.LastSeq("s1"); got != uint64(len(oddFrames)) {
			t.Errorf("LastSeq = %d", got)
		}
		i := 0
		err = r.Messages("s1", 1, func(m *store.Message) error {
			if !bytes.Equal(m.Frame, oddFrames[i]) {
				t.Errorf("frame %d = %q, want %q", i, m.Frame, oddFrames[i])
			}
			if m.Seq != uint64(i+1) || m.Dir != store.Dir(i%2) || !m.Time.Equal(t0.Add(time.Duration(i))) {
				t.Errorf("message %d: seq %d dir %v time %v", i, m.Seq, m.Dir, m.Time)
			}
			if i == 1 && !cmp.Equal(m.HTTP, meta) {
				t.Errorf("http meta: %s", cmp.Diff(meta, m.HTTP))
			}
			i++
			return nil
		})
		if i != len(oddFrames) {
			t.Errorf("read %d messages, want %d", i, len(oddFrames))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A frame stored in chunks reads back whole through every reader.
func TestCassette_ChunkedFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s, _ := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	big := oddFrames[len(oddFrames)-1]
	s.Append(store.S2C, time.Now(), big, nil)
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"after"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	err := store.View(path, func(r *store.Reader) error {
		m, err := r.Message("s1", 1)
		if err != nil {
			return err
		}
		if !bytes.Equal(m.Frame, big) {
			t.Errorf("Message: %d bytes back, want %d", len(m.Frame), len(big))
		}
		var sizes []int
		err = r.Frames("s1", 1, 0, func(seq uint64, f []byte) error {
			sizes = append(sizes, len(f))
			if seq == 1 && !bytes.Equal(f, big) {
				t.Errorf("Frames: chunked frame differs")
			}
			return nil
		})
		if len(sizes) != 2 {
			t.Errorf("Frames saw %v", sizes)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCassette_Summaries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s, _ := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	frames := []string{
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","_meta":{"progressToken":9}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"content":[],"isError":true}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}`,
		`garbage`,
		`{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{}}}`,
	}
	for i, f := range frames {
		s.Append(store.Dir(min(i, 1)), time.Now(), []byte(f), nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Kind            jsonrpc.Kind
		Method, ID, Tok string
		Tool            string
		IsError         bool
		InputRequired   bool
		Code, Size      int
	}
	want := []row{
		{jsonrpc.Request, "tools/call", `"a"`, "9", "echo", false, false, 0, len(frames[0])},
		{jsonrpc.Response, "", `"a"`, "", "", true, false, 0, len(frames[1])},
		{jsonrpc.Error, "", "2", "", "", true, false, -32602, len(frames[2])},
		{jsonrpc.Malformed, "", "", "", "", false, false, 0, len(frames[3])},
		{jsonrpc.Response, "", "3", "", "", false, true, 0, len(frames[4])},
	}
	var got []row
	err := store.View(path, func(r *store.Reader) error {
		return r.Summaries("s1", 1, nil, func(s *store.Summary) error {
			got = append(got, row{s.Kind, s.Method, s.ID, s.ProgressToken, s.Tool, s.IsError, s.InputRequired, s.ErrorCode, s.Size})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("summaries (-want +got):\n%s", d)
	}
}

func TestCassette_BadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	foreignBolt := filepath.Join(dir, "foreign.db")
	db, err := bolt.Open(foreignBolt, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other-app")); return err })
	db.Close()

	// Another program may name a bucket "meta" too, even with a version
	// in it: only the format marker tells a cassette.
	foreignMeta := filepath.Join(dir, "foreign-meta.db")
	db, err = bolt.Open(foreignMeta, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		if err := b.Put([]byte("format"), []byte("other-app")); err != nil {
			return err
		}
		return b.Put([]byte("version"), []byte("1"))
	})
	db.Close()

	newer := filepath.Join(dir, "newer.db")
	if err := store.Init(newer); err != nil {
		t.Fatal(err)
	}
	db, _ = bolt.Open(newer, 0o600, nil)
	_ = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("version"), []byte("99")) })
	db.Close()

	good := filepath.Join(dir, "good.db")
	w := newWriter(t, good)
	s, _ := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	s.Append(store.C2S, time.Now(), []byte(`{}`), nil)
	w.Close()
	raw, _ := os.ReadFile(good)
	garbled := bytes.Clone(raw)
	for i := 0; i < 64 && i < len(garbled); i++ { // both meta pages' headers
		garbled[i] ^= 0x5a
		if 4096+i < len(garbled) {
			garbled[4096+i] ^= 0x5a
		}
	}

	tests := []struct {
		name string
		path string
		want error
	}{
		{"text file", write("notes.db", []byte("hello, this is not a database\n")), store.ErrNotCassette},
		{"empty file", write("empty.db", nil), store.ErrNotCassette},
		{"another program's bbolt file", foreignBolt, store.ErrNotCassette},
		{"another program's bbolt file with a meta bucket", foreignMeta, store.ErrNotCassette},
		{"newer format", newer, store.ErrNewerFormat},
		{"missing", filepath.Join(dir, "nope.db"), store.ErrNotFound},
		{"garbled meta pages", write("garbled.db", garbled), nil},
		// Files under two bbolt pages make bbolt fail with a bare "file
		// size too small": a script or notes given by mistake, and a
		// cassette cut short inside its meta pages.
		{"a short text file", write("script.db", bytes.Repeat([]byte("tools:\n  - name: x\n"), 150)), store.ErrNotCassette},
		{"cut inside its meta pages", write("cut.db", raw[:5000]), store.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, loadErr := store.Load(tt.path)
			for what, err := range map[string]error{"Load": loadErr, "Check": store.Check(tt.path)} {
				if err == nil {
					t.Fatalf("%s succeeded", what)
				}
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("%s: error %v, want %v", what, err, tt.want)
				}
				if !strings.Contains(err.Error(), tt.path) {
					t.Errorf("%s: error %q does not name the file", what, err)
				}
			}
		})
	}
	// A writer must refuse a foreign or newer file too, before any traffic.
	for _, p := range []string{foreignBolt, foreignMeta, newer} {
		if _, err := store.NewWriter(p, store.WriterOptions{}); err == nil {
			t.Errorf("NewWriter(%s) accepted it", p)
		}
	}
}

func TestJSONL_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	w := newWriter(t, path)
	for n := range 2 {
		s, _ := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP, Upstream: fmt.Sprint("http://127.0.0.1/", n)})
		for i, f := range oddFrames {
			var meta *store.HTTPMeta
			if i%3 == 0 {
				meta = &store.HTTPMeta{Method: "POST", Stream: "post-sse", EventID: fmt.Sprint(i), Priming: []string{"p0"}}
			}
			s.Append(store.Dir(i%2), time.Unix(1700000000, int64(i*1000+n)), f, meta)
		}
		s.End(store.EndInfo{Reason: store.EndClosed, CloseCode: 1000})
	}
	w.Close()

	var first bytes.Buffer
	if err := store.Export(path, &first, nil); err != nil {
		t.Fatal(err)
	}
	tape, err := store.ReadJSONL(bytes.NewReader(first.Bytes()), "export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported.db")
	if _, err := store.Import(imported, tape); err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if err := store.Export(imported, &second, nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first.String(), second.String()); d != "" {
		t.Fatalf("export → import → export differs:\n%s", d)
	}
	// Every frame survives the trip byte for byte.
	back, err := store.Load(imported)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range back.Sessions {
		for i, m := range s.Messages {
			if !bytes.Equal(m.Frame, oddFrames[i]) {
				t.Errorf("%s seq %d: %q, want %q", s.Info.ID, m.Seq, m.Frame, oddFrames[i])
			}
		}
	}
	// An export exports to itself, whole or by session.
	jsonl := filepath.Join(dir, "export.jsonl")
	if err := os.WriteFile(jsonl, first.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sessions := range [][]string{nil, {"s2"}, {"s2", "s1"}} {
		var fromDB, fromJSONL bytes.Buffer
		if err := store.Export(path, &fromDB, sessions); err != nil {
			t.Fatal(err)
		}
		if err := store.Export(jsonl, &fromJSONL, sessions); err != nil {
			t.Fatal(err)
		}
		// Named sessions come out in the order they were named.
		if len(sessions) > 0 && !strings.HasPrefix(fromJSONL.String(), `{"session":"`+sessions[0]+`",`) {
			t.Errorf("sessions %v: exporting %s starts %.30q, want session %s first", sessions, jsonl, fromJSONL.String(), sessions[0])
		}
		if d := cmp.Diff(fromDB.String(), fromJSONL.String()); d != "" {
			t.Errorf("sessions %v: exporting the .jsonl differs from exporting the .db:\n%s", sessions, d)
		}
	}
	if err := store.Export(jsonl, io.Discard, []string{"s9"}); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("export of a missing session from a .jsonl: %v", err)
	}
	// Each line is one JSON object.
	for i, line := range strings.Split(strings.TrimSuffix(first.String(), "\n"), "\n") {
		if !jsonValid(line) {
			t.Errorf("line %d is not JSON: %s", i+1, line)
		}
	}
	// New recordings into the imported cassette do not reuse imported ids.
	w2 := newWriter(t, imported)
	s, err := w2.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	if err != nil || s.ID() != "s3" {
		t.Errorf("new session after import: %v %v", s, err)
	}
}

func TestReadJSONL_Errors(t *testing.T) {
	hdr := `{"session":"s1","info":{"transport":"stdio","upstream":"x","start":"2026-01-01T00:00:00Z"}}` + "\n"
	tests := []struct{ name, in, want string }{
		{"not json", "{oops\n", "x.jsonl:1:"},
		{"message before header", `{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", "before its header"},
		{"gap in seq", hdr + `{"session":"s1","seq":2,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", "x.jsonl:2:"},
		{"bad dir", hdr + `{"session":"s1","seq":1,"dir":"up","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", `dir "up"`},
		{"unknown field", hdr + `{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{},"extra":1}` + "\n", "extra"},
		{"no frame", hdr + `{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z"}` + "\n", `neither "message" nor "raw"`},
		{"second header", hdr + hdr, `x.jsonl:2: bad JSONL cassette: second header for session "s1"`},
		{"header info not an object", `{"session":"s1","info":[1]}` + "\n", "x.jsonl:1: bad JSONL cassette: info: want an object, got an array"},
		{"bad time", hdr + `{"session":"s1","seq":1,"dir":"c2s","time":"yesterday","message":{}}` + "\n", `x.jsonl:2: bad JSONL cassette: time "yesterday": want an RFC 3339 time, such as "2026-11-21T10:00:00.123456789Z"`},
		{"no time", hdr + `{"session":"s1","seq":1,"dir":"c2s","message":{}}` + "\n", `x.jsonl:2: bad JSONL cassette: no "time" (want an RFC 3339 time, such as "2026-11-21T10:00:00.123456789Z")`},
		{"a time not a string", hdr + `{"session":"s1","seq":1,"dir":"c2s","time":1764000000,"message":{}}` + "\n", `x.jsonl:2: bad JSONL cassette: time 1764000000: want a string, an RFC 3339 time such as`},
		{"a time out of range", hdr + `{"session":"s1","seq":1,"dir":"c2s","time":"2026-13-01T00:00:00Z","message":{}}` + "\n", `x.jsonl:2: bad JSONL cassette: time "2026-13-01T00:00:00Z": month out of range`},
		{"seq not a number", hdr + `{"session":"s1","seq":"1","dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", `x.jsonl:2: bad JSONL cassette: seq "1": want a whole number from 1`},
		{"seq below 0", hdr + `{"session":"s1","seq":-1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", `x.jsonl:2: bad JSONL cassette: seq -1: want a whole number from 1`},
		{"header start not a time", `{"session":"s1","info":{"start":"today"}}` + "\n", `x.jsonl:1: bad JSONL cassette: info: time "today": want an RFC 3339 time`},
		{"header member of the wrong type", `{"session":"s1","info":{"handshake":{"protocol_version":5}}}` + "\n", `x.jsonl:1: bad JSONL cassette: info.handshake.protocol_version: want a string, got a number`},
		{"no session", `{"seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", `x.jsonl:1: bad JSONL cassette: missing "session"`},
		{"seq repeated", hdr + `{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n" +
			`{"session":"s1","seq":1,"dir":"s2c","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", "x.jsonl:3: bad JSONL cassette: seq 1, want 2"},
		{"seq 0", hdr + `{"session":"s1","seq":0,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{}}` + "\n", "x.jsonl:2: bad JSONL cassette: seq 0, want 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := store.ReadJSONL(strings.NewReader(tt.in), "x.jsonl")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// Two writers on one file behave like two recording processes: each holds
// the file only while committing. A reader polling meanwhile always sees a
// gap-free prefix of each session.
// A session named twice (by id twice, or by id and by name) is exported
// once: --session flags give the union, and an export holding a session
// twice does not import.
func TestExport_SessionNamedTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	w := newWriter(t, path)
	for _, name := range []string{"alpha", "beta"} {
		s, err := w.NewSession(store.SessionInfo{Name: name, Transport: store.TransportStdio})
		if err != nil {
			t.Fatal(err)
		}
		s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
		s.End(store.EndInfo{Reason: store.EndEOF})
	}
	w.Close()
	var whole bytes.Buffer
	if err := store.Export(path, &whole, nil); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(jsonl, whole.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sessions []string
		want     []string // the sessions exported, in order
	}{
		{"id twice", []string{"s1", "s1"}, []string{"s1"}},
		{"id and name", []string{"s1", "alpha"}, []string{"s1"}},
		{"first named comes first", []string{"s2", "s1", "beta"}, []string{"s2", "s1"}},
	}
	exports := map[string]func(sessions []string, w io.Writer) error{
		".db":     func(ss []string, w io.Writer) error { return store.Export(path, w, ss) },
		".jsonl":  func(ss []string, w io.Writer) error { return store.Export(jsonl, w, ss) },
		"salvage": func(ss []string, w io.Writer) error { _, err := store.Salvage(path, w, ss); return err },
	}
	for _, tt := range tests {
		for how, export := range exports {
			t.Run(tt.name+", "+how, func(t *testing.T) {
				var out bytes.Buffer
				if err := export(tt.sessions, &out); err != nil {
					t.Fatal(err)
				}
				tape, err := store.ReadJSONL(bytes.NewReader(out.Bytes()), "out.jsonl")
				if err != nil {
					t.Fatalf("the export does not read back: %v", err)
				}
				var got []string
				for _, s := range tape.Sessions {
					got = append(got, s.Info.ID)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("sessions %v exported %v, want %v", tt.sessions, got, tt.want)
				}
			})
		}
	}
}

func TestWriter_SharedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	const perWriter = 3000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := store.View(path, func(r *store.Reader) error {
				infos, err := r.Sessions()
				for _, in := range infos {
					n := r.Count(in.ID)
					if last := r.LastSeq(in.ID); uint64(n) != last {
						return fmt.Errorf("session %s: %d messages but last seq %d", in.ID, n, last)
					}
				}
				return err
			})
			if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrNotCassette) {
				readerErr <- err
				return
			}
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
			if err != nil {
				t.Error(err)
				return
			}
			s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range perWriter {
				s.Append(store.C2S, time.Now(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i)), nil)
			}
			s.End(store.EndInfo{Reason: store.EndEOF})
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 2 {
		t.Fatalf("%d sessions", len(tape.Sessions))
	}
	for _, s := range tape.Sessions {
		if len(s.Messages) != perWriter {
			t.Errorf("%s has %d messages, want %d", s.Info.ID, len(s.Messages), perWriter)
		}
	}
}

// A cassette that cannot be created (its directory is missing) is named
// in the error, not the temporary file it is built in, which the user has
// never heard of.
func TestCassette_CreateInMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "c.db")
	tests := []struct {
		name   string
		create func() error
	}{
		{"writer", func() error {
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
			if err == nil {
				w.Close()
			}
			return err
		}},
		{"init", func() error { return store.Init(path) }},
		{"import", func() error { _, err := store.Import(path, &store.Tape{}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.create()
			want := "create cassette " + path + ": create a file in " + filepath.Dir(path) + ": no such file or directory"
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), ".creating-") {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}

// A cassette is created 0600 however it comes to be. (One made anew by a
// writer after a removal: TestWriter_CassetteRemovedWhileRecording.)
func TestWriter_FileMode(t *testing.T) {
	tape := &store.Tape{Sessions: []store.TapeSession{{
		Info:     store.SessionInfo{ID: "s1", Transport: store.TransportStdio},
		Messages: []*store.Message{{Session: "s1", Seq: 1, Time: time.Unix(1700000000, 0), Frame: []byte(`{}`)}},
	}}}
	tests := []struct {
		name   string
		create func(t *testing.T, path string) error
	}{
		{"writer", func(t *testing.T, path string) error { newWriter(t, path); return nil }},
		{"init", func(_ *testing.T, path string) error { return store.Init(path) }},
		{"import", func(_ *testing.T, path string) error { _, err := store.Import(path, tape); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			if err := tt.create(t, path); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("cassette mode %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// Rewrite decides what is stored, before Observe sees it; the appended
// message itself is left alone.
func TestWriter_Rewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	var observed []string
	w, err := store.NewWriter(path, store.WriterOptions{
		NoSync: true,
		Rewrite: func(m *store.Message) *store.Message {
			c := *m
			c.Frame = bytes.ReplaceAll(m.Frame, []byte("secret"), []byte("xxxxxx"))
			return &c
		},
		Observe: func(_ *store.SessionInfo, m *store.Message, _ *store.Summary) bool {
			observed = append(observed, string(m.Frame)) // the commit goroutine only
			return false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"login","params":{"password":"secret"}}`)
	s.Append(store.C2S, time.Now(), frame, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"login","params":{"password":"xxxxxx"}}`
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tape.Sessions[0].Messages[0].Frame); got != want {
		t.Errorf("stored %s, want %s", got, want)
	}
	if len(observed) != 1 || observed[0] != want {
		t.Errorf("Observe saw %q, want the rewritten frame", observed)
	}
	if !bytes.Contains(frame, []byte("secret")) {
		t.Errorf("the appended frame was changed in place")
	}
}

// A path that is not a regular file is refused as such, for reading and
// for recording, not as a file that is not bbolt.
func TestCassette_NotAFile(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ path, kind string }{{dir, "a directory"}, {os.DevNull, "a device"}} {
		_, err := store.Load(tt.path)
		_, werr := store.NewWriter(tt.path, store.WriterOptions{})
		for _, err := range []error{err, werr, store.Check(tt.path)} {
			if !errors.Is(err, store.ErrNotCassette) || !strings.Contains(err.Error(), tt.path+": not an mcptape cassette ("+tt.kind+", not a file)") {
				t.Errorf("%s: %v, want it named %s", tt.path, err, tt.kind)
			}
		}
	}
}

// An export leaves out which process recorded a session: its pid and
// host name mean something only on that machine, while it runs, and an
// export is what gets attached to a bug report.
func TestExport_LeavesOutRecorderProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var sessions []store.SessionInfo
	if err := store.View(path, func(r *store.Reader) (err error) {
		sessions, err = r.Sessions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].RecorderProcess == nil {
		t.Fatalf("the cassette does not note the recording process: %+v", sessions)
	}
	var out bytes.Buffer
	if err := store.Export(path, &out, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "recorder_process") {
		t.Errorf("the export names the recording process:\n%s", out.String())
	}
	s.End(store.EndInfo{Reason: store.EndEOF})
	w.Close()
}
