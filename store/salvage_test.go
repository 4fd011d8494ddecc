package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

var markerRE = regexp.MustCompile(`@(s\d)#(\d{4})@`)

// zeroPageOf overwrites with zeros the page that holds marker, as a disk
// fault would, and returns the seqs of session whose markers were on it.
func zeroPageOf(t *testing.T, path, marker, session string) []uint64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte(marker)); n != 1 {
		t.Fatalf("%s is in the file %d times, want once", marker, n)
	}
	pageSize := os.Getpagesize()
	page := bytes.Index(data, []byte(marker)) / pageSize * pageSize
	var on []uint64
	for _, m := range markerRE.FindAllSubmatch(data[page:page+pageSize], -1) {
		if string(m[1]) == session {
			q, _ := strconv.ParseUint(string(m[2]), 10, 64)
			on = append(on, q)
		}
	}
	copy(data[page:page+pageSize], make([]byte, pageSize))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return on
}

// salvage runs Salvage and reads its output back as an import would.
func salvage(t *testing.T, path string, sessions ...string) (*Tape, *SalvageReport, string) {
	t.Helper()
	var out bytes.Buffer
	rep, err := Salvage(path, &out, sessions)
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	tape, err := ReadJSONL(bytes.NewReader(out.Bytes()), "salvaged.jsonl")
	if err != nil {
		t.Fatalf("the salvaged export does not import: %v", err)
	}
	return tape, rep, out.String()
}

// On an undamaged cassette Salvage writes exactly what Export writes,
// HTTP metadata and a chunked frame included, and reports no loss.
func TestSalvage_UndamagedIsExport(t *testing.T) {
	for _, path := range []string{damagedCassette(t, nil), importTape(t, markedTape(50))} {
		var want bytes.Buffer
		if err := Export(path, &want, nil); err != nil {
			t.Fatal(err)
		}
		_, rep, got := salvage(t, path)
		if got != want.String() {
			t.Errorf("salvage of an undamaged cassette differs from its export:\n%.400s\nwant\n%.400s", got, want.String())
		}
		if len(rep.Lost) != 0 || rep.Messages != bytes.Count(want.Bytes(), []byte(`"seq":`)) {
			t.Errorf("report %+v, want every message and no loss", rep)
		}
	}
}

// A page of one session's messages overwritten with zeros costs exactly
// the messages on that page: the rest of that session and every other
// session are salvaged byte for byte, renumbered densely, and the first
// message after the gap says what was lost before it.
func TestSalvage_ZeroedPageLosesOnlyItsMessages(t *testing.T) {
	tape := markedTape(400)
	path := importTape(t, tape)
	onPage := zeroPageOf(t, path, "@s2#0150@", "s2")
	for i := 1; i < len(onPage); i++ {
		if onPage[i] != onPage[i-1]+1 {
			t.Fatalf("the page holds seqs %v, not one run: the test's premise fails", onPage)
		}
	}
	from, to := onPage[0], onPage[len(onPage)-1]

	// The plain reads refuse, naming the damage (in words, not as bbolt's
	// failed assertion); salvage goes on.
	if err := Export(path, new(bytes.Buffer), nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "identifies itself as page 0") {
		t.Fatalf("export of the damaged cassette: %v, want %v naming the page", err, ErrCorrupt)
	}
	got, rep, _ := salvage(t, path)

	if len(rep.Lost) != 1 {
		t.Fatalf("losses %v, want one", rep.Lost)
	}
	if l := rep.Lost[0]; l.Session != "s2" || l.From != from || l.To != to || !errors.Is(l.Err, ErrCorrupt) {
		t.Errorf("loss %v, want s2 seqs %d–%d, ErrCorrupt", l, from, to)
	}
	if want := 3*400 - len(onPage); rep.Messages != want || rep.LostMessages() != len(onPage) || rep.Sessions != 3 {
		t.Errorf("report: %d messages in %d sessions, %d lost; want %d in 3, %d lost", rep.Messages, rep.Sessions, rep.LostMessages(), want, len(onPage))
	}
	for i, s := range got.Sessions {
		orig := tape.Sessions[i]
		if s.Info.ID != orig.Info.ID || s.Info.Upstream != "server" {
			t.Errorf("session %d: info %+v", i, s.Info)
		}
		lost := 0
		if s.Info.ID == "s2" {
			lost = len(onPage)
		}
		if len(s.Messages) != len(orig.Messages)-lost {
			t.Errorf("%s: %d messages, want %d", s.Info.ID, len(s.Messages), len(orig.Messages)-lost)
			continue
		}
		for k, m := range s.Messages {
			o := uint64(k + 1)
			if o >= from && lost > 0 {
				o += uint64(lost)
			}
			want := orig.Messages[o-1]
			if !bytes.Equal(m.Frame, want.Frame) || !m.Time.Equal(want.Time) || m.Dir != want.Dir {
				t.Errorf("%s seq %d (was %d): frame %.40s, want %.40s", s.Info.ID, m.Seq, o, m.Frame, want.Frame)
			}
			wantNote := ""
			if o != m.Seq {
				wantNote = fmt.Sprintf("salvaged from c.db s2 #%d", o)
				if o == to+1 {
					wantNote += fmt.Sprintf("; seqs %d–%d lost before it", from, to)
				}
			}
			if m.Note != wantNote {
				t.Errorf("%s seq %d: note %q, want %q", s.Info.ID, m.Seq, m.Note, wantNote)
			}
		}
	}
}

// Damage found by the record decoder, or a record missing from one tree,
// costs that message alone; the error says what was wrong with it.
func TestSalvage_DamagedRecords(t *testing.T) {
	tests := []struct {
		name   string
		damage func(tx *bolt.Tx) error
		lost   [][2]uint64
		want   string // in the first loss's error
	}{
		{"a record truncated",
			func(tx *bolt.Tx) error {
				return sessionBucket(tx, bucketMessages).Put(seqKey(1), []byte{codecVersion, 0})
			},
			[][2]uint64{{1, 1}}, "truncated record"},
		{"a chunk of the large frame missing",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketBlobs).Delete(chunkKey(2, 1)) },
			[][2]uint64{{2, 2}}, "chunk 1 of a"},
		{"the first record gone, its summary kept",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketMessages).Delete(seqKey(1)) },
			[][2]uint64{{1, 1}}, "missing"},
		{"the last record gone, its summary kept",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketMessages).Delete(seqKey(2)) },
			[][2]uint64{{2, 2}}, "not found, though the session reaches seq 2"},
		{"a record's key damaged to a seq past any session's end",
			func(tx *bolt.Tx) error {
				b := sessionBucket(tx, bucketMessages)
				rec := bytes.Clone(b.Get(seqKey(1)))
				if err := b.Delete(seqKey(1)); err != nil {
					return err
				}
				return b.Put(seqKey(1<<50+1), rec)
			},
			[][2]uint64{{1, 1}}, "seq 1: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := damagedCassette(t, tt.damage)
			var want bytes.Buffer
			if err := Export(damagedCassette(t, nil), &want, nil); err != nil {
				t.Fatal(err)
			}
			got, rep, _ := salvage(t, path)
			var lost [][2]uint64
			for _, l := range rep.Lost {
				lost = append(lost, [2]uint64{l.From, l.To})
			}
			if fmt.Sprint(lost) != fmt.Sprint(tt.lost) || !strings.Contains(rep.Lost[0].Err.Error(), tt.want) || !strings.Contains(rep.Lost[0].Err.Error(), path) {
				t.Fatalf("losses %v, want %v with %q and the file named", rep.Lost, tt.lost, tt.want)
			}
			if n := len(got.Sessions[0].Messages); n != 1 || rep.Messages != 1 {
				t.Fatalf("salvaged %d messages (report %d), want the undamaged one", n, rep.Messages)
			}
			kept := got.Sessions[0].Messages[0]
			orig, err := Load(damagedCassette(t, nil))
			if err != nil {
				t.Fatal(err)
			}
			if o := orig.Sessions[0].Messages[2-tt.lost[0][0]]; !bytes.Equal(kept.Frame, o.Frame) {
				t.Errorf("kept frame %.40s, want %.40s", kept.Frame, o.Frame)
			}
		})
	}
}

// A session whose info cannot be read keeps its messages: its header is
// made from them (transport "unknown", the start of its first message),
// and the lost info is reported.
func TestSalvage_SessionInfoLost(t *testing.T) {
	path := damagedCassette(t, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).Put([]byte("s1"), []byte("{not json"))
	})
	got, rep, _ := salvage(t, path)
	if len(rep.Lost) != 1 || rep.Lost[0].Session != "s1" || rep.Lost[0].From != 0 || !errors.Is(rep.Lost[0].Err, ErrCorrupt) {
		t.Fatalf("losses %v, want s1's info", rep.Lost)
	}
	if !strings.Contains(rep.Lost[0].String(), "s1: session info lost") {
		t.Errorf("loss reads %q", rep.Lost[0])
	}
	s := got.Sessions[0]
	if s.Info.ID != "s1" || s.Info.Transport != TransportUnknown || len(s.Messages) != 2 || !s.Info.Start.Equal(s.Messages[0].Time) {
		t.Errorf("session %+v with %d messages, want s1, transport unknown, starting at its first message", s.Info, len(s.Messages))
	}
	if rep.LostMessages() != 0 {
		t.Errorf("lost messages %d, want 0", rep.LostMessages())
	}
}

// --session picks what to salvage, by id or name, as export does.
func TestSalvage_Sessions(t *testing.T) {
	path := importTape(t, markedTape(5))
	got, rep, _ := salvage(t, path, "s3", "s1")
	if len(got.Sessions) != 2 || got.Sessions[0].Info.ID != "s3" || got.Sessions[1].Info.ID != "s1" || rep.Messages != 10 {
		t.Errorf("salvaged %d sessions, report %+v", len(got.Sessions), rep)
	}
	if _, err := Salvage(path, new(bytes.Buffer), []string{"s9"}); !errors.Is(err, ErrNoSession) {
		t.Errorf("salvage of s9: %v, want %v", err, ErrNoSession)
	}
}

// An export that a download cut short or an editor mangled gives up
// every line that can still be read: a bad line is a loss with its
// number, the gap it leaves in a session's seqs a loss of those seqs, and
// the output renumbers and notes as for a .db.
func TestSalvage_JSONL(t *testing.T) {
	var text bytes.Buffer
	if err := WriteJSONL(&text, markedTape(4)); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(text.String(), "\n")
	// lines: 0 s1 header, 1–4 s1 seqs 1–4, 5 s2 header, 6–9 s2, 10 s3 header, 11–14 s3
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "")
	}
	tests := []struct {
		name     string
		text     string
		sessions []string
		lost     []string // Loss.String() prefixes, in order
		s2       []string // the markers of s2's salvaged messages, in order
		s2Notes  []string
	}{
		{"undamaged", text.String(), nil, nil,
			[]string{"@s2#0001@", "@s2#0002@", "@s2#0003@", "@s2#0004@"}, []string{"", "", "", ""}},
		{"a line mangled", edit(func(l []string) []string { l[7] = l[7][:40] + "\n"; return l }), nil,
			[]string{"line 8 unreadable: ", "s2: seq 2 lost: "},
			[]string{"@s2#0001@", "@s2#0003@", "@s2#0004@"},
			[]string{"", "salvaged from c.jsonl s2 #3; seq 2 lost before it", "salvaged from c.jsonl s2 #4"}},
		{"cut short in the last line", edit(func(l []string) []string { l[14] = l[14][:60]; return l }), nil,
			[]string{"line 15 unreadable: "},
			[]string{"@s2#0001@", "@s2#0002@", "@s2#0003@", "@s2#0004@"}, []string{"", "", "", ""}},
		{"a header line lost", edit(func(l []string) []string { l[5] = "{\n"; return l }), nil,
			[]string{"line 6 unreadable: ", "s2: session info lost: "},
			[]string{"@s2#0001@", "@s2#0002@", "@s2#0003@", "@s2#0004@"}, []string{"", "", "", ""}},
		{"a line repeated", edit(func(l []string) []string { l[7] = l[7] + l[6]; return l }), nil,
			[]string{"line 9 unreadable: "},
			[]string{"@s2#0001@", "@s2#0002@", "@s2#0003@", "@s2#0004@"}, []string{"", "", "", ""}},
		{"one session asked for", edit(func(l []string) []string { l[2] = "x\n"; l[7] = "y\n"; return l }), []string{"s2"},
			[]string{"line 3 unreadable: ", "line 8 unreadable: ", "s2: seq 2 lost: "},
			[]string{"@s2#0001@", "@s2#0003@", "@s2#0004@"},
			[]string{"", "salvaged from c.jsonl s2 #3; seq 2 lost before it", "salvaged from c.jsonl s2 #4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.jsonl")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, rep, _ := salvage(t, path, tt.sessions...)
			var lost []string
			for _, l := range rep.Lost {
				lost = append(lost, l.String())
				if !strings.Contains(l.Err.Error(), path) || !errors.Is(l.Err, ErrJSONL) {
					t.Errorf("loss %v: want ErrJSONL naming %s", l, path)
				}
			}
			if len(lost) != len(tt.lost) {
				t.Fatalf("losses %q, want %q", lost, tt.lost)
			}
			for i := range lost {
				if !strings.HasPrefix(lost[i], tt.lost[i]) {
					t.Errorf("loss %d: %q, want %q…", i, lost[i], tt.lost[i])
				}
			}
			var s2 *TapeSession
			for i := range got.Sessions {
				if got.Sessions[i].Info.ID == "s2" {
					s2 = &got.Sessions[i]
				}
			}
			if s2 == nil || len(s2.Messages) != len(tt.s2) {
				t.Fatalf("s2: %+v, want %d messages", s2, len(tt.s2))
			}
			for i, m := range s2.Messages {
				if !bytes.Contains(m.Frame, []byte(tt.s2[i])) || m.Note != tt.s2Notes[i] || m.Seq != uint64(i+1) {
					t.Errorf("s2 message %d: seq %d %.60s note %q; want %s, note %q", i, m.Seq, m.Frame, m.Note, tt.s2[i], tt.s2Notes[i])
				}
			}
			if want := len(got.Sessions); rep.Sessions != want || (tt.sessions != nil && want != len(tt.sessions)) {
				t.Errorf("report: %d sessions, the output has %d", rep.Sessions, want)
			}
		})
	}
}

// Salvage never crashes on a damaged file and what it writes always
// imports: the fuzzer overwrites bytes of a small cassette, as a failing
// disk would. Each 3 bytes of input are one edit: where (scaled to the
// file) and the byte written.
//
// Any byte may be damaged: page headers, branch pointers (checkTree's
// loose walk finds the loops bbolt's cursors would go round, and Salvage
// cuts them), meta pages, keys and values, free pages.
func FuzzSalvage(f *testing.F) {
	if raceEnabled {
		// -race builds with checkptr, under which bbolt's unsafe.Slice over
		// a damaged key or value length is a fatal error, not a panic: the
		// seeds include such a length. .ci/run fuzzes this target, seeds
		// first, in a build without -race.
		f.Skip("needs a build without -race: checkptr makes bbolt's reads of a damaged length fatal")
	}
	dir := f.TempDir()
	base := filepath.Join(dir, "base.db")
	if _, err := Import(base, markedTape(40)); err != nil {
		f.Fatal(err)
	}
	orig, err := os.ReadFile(base)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0x10, 0x00, 0x00})
	f.Add([]byte{0x80, 0x00, 0xff, 0x40, 0x10, 0x00})
	f.Add([]byte{0x00, 0x00, 0x00, 0x00, 0x40, 0x00})
	path := filepath.Join(dir, "damaged.db")
	f.Fuzz(func(t *testing.T, edits []byte) {
		data := bytes.Clone(orig)
		for i := 0; i+3 <= len(edits) && i < 3*64; i += 3 {
			at := int(edits[i])<<8 | int(edits[i+1])
			data[at*len(data)>>16] = edits[i+2]
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		rep, err := Salvage(path, &out, nil)
		if err != nil {
			return // a file that does not open, or is not a cassette, is refused: fine
		}
		if _, err := ReadJSONL(bytes.NewReader(out.Bytes()), "salvaged.jsonl"); err != nil {
			t.Fatalf("the salvaged export does not import: %v", err)
		}
		if rep.Messages != bytes.Count(out.Bytes(), []byte(`,"seq":`)) {
			t.Fatalf("report counts %d messages, the output holds %d", rep.Messages, bytes.Count(out.Bytes(), []byte(`,"seq":`)))
		}
	})
}

// --session on a damaged cassette reports the losses of the sessions
// asked for alone.
func TestSalvage_SessionsReportTheirLossesOnly(t *testing.T) {
	path := importTape(t, markedTape(400))
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketSessions).Put([]byte("s3"), []byte("{not json")) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	zeroPageOf(t, path, "@s2#0150@", "s2")
	for _, tt := range []struct {
		session string
		losses  int
	}{{"s1", 0}, {"s2", 1}, {"s3", 1}} {
		_, rep, _ := salvage(t, path, tt.session)
		if len(rep.Lost) != tt.losses || rep.Sessions != 1 {
			t.Errorf("--session %s: %d sessions, losses %v; want 1 session, %d losses", tt.session, rep.Sessions, rep.Lost, tt.losses)
		}
	}
}

// A session whose bucket key was damaged into bytes an export cannot
// carry (not UTF-8, or empty) keeps its messages under a new id, and the
// damaged id is reported.
func TestSalvage_DamagedSessionKey(t *testing.T) {
	path := importTape(t, markedTape(3))
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, top := range [][]byte{bucketMessages, bucketIndex} {
			from := tx.Bucket(top).Bucket([]byte("s2"))
			to, err := tx.Bucket(top).CreateBucket([]byte("s\xff"))
			if err != nil {
				return err
			}
			if err := from.ForEach(func(k, v []byte) error { return to.Put(k, v) }); err != nil {
				return err
			}
			if err := tx.Bucket(top).DeleteBucket([]byte("s2")); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketSessions).Delete([]byte("s2"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	got, rep, _ := salvage(t, path)
	var ids []string
	for _, s := range got.Sessions {
		ids = append(ids, s.Info.ID)
	}
	if fmt.Sprint(ids) != "[s1 damaged-1 s3]" { // by start, s2's taken from its first message
		t.Fatalf("sessions %v, want s1, damaged-1 (s2's messages), s3", ids)
	}
	for _, s := range got.Sessions {
		if s.Info.ID == "damaged-1" && (len(s.Messages) != 3 || !bytes.Contains(s.Messages[0].Frame, []byte("@s2#0001@"))) {
			t.Errorf("damaged-1 holds %d messages, want s2's 3", len(s.Messages))
		}
	}
	var lost []string
	for _, l := range rep.Lost {
		lost = append(lost, l.String())
	}
	if len(lost) != 2 || !strings.Contains(lost[0], `damaged-1: session id lost: `+path+`: cassette is corrupt: session id "s\xff" damaged; its messages are under damaged-1`) ||
		!strings.HasPrefix(lost[1], "damaged-1: session info lost: not in the sessions list") {
		t.Errorf("losses %q, want the damaged id, then the info it lost", lost)
	}
	// Counted apart: one id and one info, not two infos.
	if !rep.Lost[0].Renamed || rep.Lost[0].InfoLost() || !rep.Lost[1].InfoLost() {
		t.Errorf("losses %+v: want the first an id (Renamed), the second an info", rep.Lost)
	}
}

// testdata/cut-short.db is the first 20 KiB of a cassette mcpspy
// recorded (two sessions of the MCP Inspector with server-everything,
// 8 and 10 messages): its root page survived the cut, and says there
// were two sessions, but the pages of both trees went with it. Salvage
// once wrote "0 messages in 0 sessions" of it and reported nothing lost;
// it reports both sessions lost, their info and every message.
func TestSalvage_CutBeforeBothTrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.db")
	data, err := os.ReadFile(filepath.Join("testdata", "cut-short.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Salvage(path, new(bytes.Buffer), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range rep.Lost {
		if !errors.Is(l.Err, ErrCorrupt) || !strings.Contains(l.Err.Error(), "past the end of the file") {
			t.Errorf("loss %v: want the page past the end named", l)
		}
		got = append(got, fmt.Sprintf("%s info:%v from:%d toEnd:%v", l.Session, l.InfoLost(), l.From, l.ToEnd))
	}
	slices.Sort(got)
	want := []string{"s1 info:false from:1 toEnd:true", "s1 info:true from:0 toEnd:false",
		"s2 info:false from:1 toEnd:true", "s2 info:true from:0 toEnd:false"}
	if !slices.Equal(got, want) {
		t.Errorf("losses %q, want %q", got, want)
	}
	if rep.Messages != 0 {
		t.Errorf("salvaged %d messages of pages that are not there", rep.Messages)
	}
}
