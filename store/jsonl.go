package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	bolt "go.etcd.io/bbolt"
)

// JSONL export: a header line per session, then its messages, one object a
// line:
//
//	{"session":"s1","info":{…}}
//	{"session":"s1","seq":1,"dir":"c2s","time":"…","message":{…}}
//
// A frame that is valid JSON on one line is written verbatim as "message".
// When the frame's exact bytes cannot be carried that way (surrounding
// white space such as a "\r" before the newline, a newline inside a
// pretty-printed HTTP body, or not JSON at all), "raw" holds them as a
// string, or "raw_base64" when they are not valid UTF-8. Import prefers raw
// over message, so .db → .jsonl → .db keeps every byte.

// timeLayout always writes nine fractional digits, so lines sort and
// compare as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Tape is a whole cassette in memory: what replay and import work from.
type Tape struct {
	Sessions []TapeSession
}

// TapeSession is one session with all its messages in seq order.
type TapeSession struct {
	Info     SessionInfo
	Messages []*Message
}

type headerLine struct {
	Session string       `json:"session"`
	Info    *SessionInfo `json:"info"`
}

// messageLine is one line of an export, as parseLine reads it.
type messageLine struct {
	Session   string
	Info      []byte // the header's raw info object; nil on message lines
	Seq       uint64
	Dir       string
	Time      []byte // raw JSON
	Message   []byte
	Raw       *string
	RawBase64 []byte
	HTTP      *HTTPMeta
	Note      string
}

// jsonlEncoder writes export lines; strings are not HTML-escaped, so the
// text reads as the wire did.
type jsonlEncoder struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	// mapMessage, if not nil, gives what to write for a message.
	mapMessage func(*Message) *Message
}

func newJSONLEncoder(w io.Writer, opts []ExportOption) *jsonlEncoder {
	e := &jsonlEncoder{w: bufio.NewWriterSize(w, 256<<10)}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	for _, o := range opts {
		o(e)
	}
	return e
}

// ExportOption changes what Export and WriteJSONL write.
type ExportOption func(*jsonlEncoder)

// MapMessages writes, for each message, the message fn returns: m itself
// or a changed copy (mcpspy export --redact). fn must not change m.
func MapMessages(fn func(m *Message) *Message) ExportOption {
	return func(e *jsonlEncoder) { e.mapMessage = fn }
}

// value appends v's JSON (without the encoder's newline) to the line.
func (e *jsonlEncoder) value(line []byte, v any) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return append(line, bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))...), nil
}

func (e *jsonlEncoder) header(info *SessionInfo) error {
	line, err := e.value(nil, headerLine{Session: info.ID, Info: info})
	if err != nil {
		return err
	}
	_, err = e.w.Write(append(line, '\n'))
	return err
}

func (e *jsonlEncoder) message(m *Message) error {
	if e.mapMessage != nil {
		m = e.mapMessage(m)
	}
	line, err := e.value([]byte(`{"session":`), m.Session)
	if err != nil {
		return err
	}
	line = append(line, `,"seq":`...)
	line = strconv.AppendUint(line, m.Seq, 10)
	line = append(line, `,"dir":"`...)
	line = append(line, m.Dir.String()...)
	line = append(line, `","time":"`...)
	line = m.Time.UTC().AppendFormat(line, timeLayout)
	line = append(line, '"')

	frame := m.Frame
	trimmed := bytes.TrimSpace(frame)
	switch {
	case json.Valid(trimmed) && !bytes.ContainsAny(trimmed, "\r\n"):
		line = append(line, `,"message":`...)
		line = append(line, trimmed...)
		if len(trimmed) != len(frame) {
			line = append(line, `,"raw":`...)
			line, err = e.value(line, string(frame))
		}
	case json.Valid(trimmed):
		var c bytes.Buffer
		_ = json.Compact(&c, trimmed)
		line = append(line, `,"message":`...)
		line = append(line, c.Bytes()...)
		line = append(line, `,"raw":`...)
		line, err = e.value(line, string(frame))
	case utf8.Valid(frame):
		line = append(line, `,"raw":`...)
		line, err = e.value(line, string(frame))
	default:
		line = append(line, `,"raw_base64":`...)
		line, err = e.value(line, frame)
	}
	if err != nil {
		return err
	}
	if m.HTTP != nil {
		line = append(line, `,"http":`...)
		if line, err = e.value(line, m.HTTP); err != nil {
			return err
		}
	}
	if m.Note != "" {
		line = append(line, `,"note":`...)
		if line, err = e.value(line, m.Note); err != nil {
			return err
		}
	}
	line = append(line, "}\n"...)
	_, err = e.w.Write(line)
	return err
}

// Export writes the named sessions (all when none are named) of the
// cassette at path to w as JSONL. The cassette may be a JSONL export
// itself: exporting it again gives the same text, or with options (a
// redaction) a changed copy.
func Export(path string, w io.Writer, sessions []string, opts ...ExportOption) error {
	if strings.EqualFold(filepath.Ext(path), ".jsonl") {
		t, err := Load(path)
		if err != nil {
			return err
		}
		if err := t.pick(path, sessions); err != nil {
			return err
		}
		return WriteJSONL(w, t, opts...)
	}
	e := newJSONLEncoder(w, opts)
	err := View(path, func(r *Reader) error {
		infos, err := r.ResolveSessions(sessions)
		if err != nil {
			return err
		}
		for i := range infos {
			if err := e.header(&infos[i]); err != nil {
				return err
			}
			if err := r.Messages(infos[i].ID, 1, e.message); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return e.w.Flush()
}

// pick keeps the sessions that names name (ids or names, as --session takes
// them), in the order named; no names keeps them all. path is for errors.
func (t *Tape) pick(path string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	infos := make([]SessionInfo, len(t.Sessions))
	for i := range t.Sessions {
		infos[i] = t.Sessions[i].Info
	}
	want, err := resolve(path, infos, names)
	if err != nil {
		return err
	}
	var picked []TapeSession
	for _, info := range want {
		for _, s := range t.Sessions {
			if s.Info.ID == info.ID {
				picked = append(picked, s)
			}
		}
	}
	t.Sessions = picked
	return nil
}

// WriteJSONL writes a tape as JSONL.
func WriteJSONL(w io.Writer, t *Tape, opts ...ExportOption) error {
	e := newJSONLEncoder(w, opts)
	for i := range t.Sessions {
		s := &t.Sessions[i]
		if err := e.header(&s.Info); err != nil {
			return err
		}
		for _, m := range s.Messages {
			if err := e.message(m); err != nil {
				return err
			}
		}
	}
	return e.w.Flush()
}

// ErrJSONL marks a JSONL file that cannot be read; the message names the
// file and line.
var ErrJSONL = errors.New("bad JSONL cassette")

// ReadJSONL reads an export. name is used in errors ("file.jsonl:12: …").
// Lines may be of any length. Seqs must be dense from 1 per session, and a
// session's header must come before its messages. Frames share the memory
// of the text read.
func ReadJSONL(r io.Reader, name string) (*Tape, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return readJSONL(data, name)
}

// jsonlChunk is the least text worth a parsing worker of its own.
const jsonlChunk = 1 << 20

// readJSONL parses the lines on every core, in chunks of whole lines, then
// checks what depends on the lines before (headers, seqs) in one pass in
// file order: replaying a 100k-line export starts with reading all of it.
// The first error in file order wins, as in a line-by-line read.
func readJSONL(data []byte, name string) (*Tape, error) {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(data)/jsonlChunk))
	var chunks [][]byte
	for rest := data; len(rest) > 0; {
		n := len(rest)
		if len(chunks) < workers-1 {
			n = min(n, len(data)/workers)
			if nl := bytes.IndexByte(rest[n:], '\n'); nl >= 0 {
				n += nl + 1
			} else {
				n = len(rest)
			}
		}
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	parsed := make([][]jsonlRecord, len(chunks))
	lines := make([]int, len(chunks)) // "\n"s in each chunk
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parsed[i], lines[i] = parseChunk(c)
		}()
	}
	wg.Wait()

	// An export of one session (most are) gets its list of messages at
	// its size: grown by doubling, it was a tenth of this pass.
	headers, messages := 0, 0
	for _, recs := range parsed {
		for k := range recs {
			if recs[k].info != nil {
				headers++
			} else if recs[k].msg != nil {
				messages++
			}
		}
	}
	t := &Tape{}
	index := map[string]int{}
	// Lines of one session come together: the last one's place spares a
	// map look-up per line.
	lastSession, last := "", -1
	lineBase := 0
	for ci, recs := range parsed {
		for k := range recs {
			rec := &recs[k]
			fail := func(format string, a ...any) error {
				return fmt.Errorf("%s:%d: %w: %s", name, lineBase+rec.line, ErrJSONL, fmt.Sprintf(format, a...))
			}
			if rec.early != "" {
				return nil, fail("%s", rec.early)
			}
			if rec.info != nil {
				if _, dup := index[rec.session]; dup {
					return nil, fail("second header for session %q", rec.session)
				}
				if rec.late != "" {
					return nil, fail("%s", rec.late)
				}
				index[rec.session] = len(t.Sessions)
				t.Sessions = append(t.Sessions, TapeSession{Info: *rec.info})
				if headers == 1 {
					t.Sessions[0].Messages = make([]*Message, 0, messages)
				}
				continue
			}
			if last < 0 || rec.session != lastSession {
				i, ok := index[rec.session]
				if !ok {
					return nil, fail("message for session %q before its header line", rec.session)
				}
				lastSession, last = rec.session, i
			}
			s := &t.Sessions[last]
			if want := uint64(len(s.Messages) + 1); rec.msg.Seq != want {
				return nil, fail("seq %d, want %d (seqs run from 1 without gaps)", rec.msg.Seq, want)
			}
			if rec.late != "" {
				return nil, fail("%s", rec.late)
			}
			s.Messages = append(s.Messages, rec.msg)
		}
		lineBase += lines[ci]
	}
	return t, nil
}

// jsonlRecord is one line, parsed on its own. Errors are kept apart by
// when a line-by-line reader would report them: early before the checks
// that depend on earlier lines, late after them.
type jsonlRecord struct {
	line    int // within its chunk, from 1
	session string
	info    *SessionInfo // header lines
	msg     *Message     // message lines
	early   string
	late    string
}

// parseChunk parses whole lines up to the first with an error: nothing
// after it can matter. It returns the records and how many "\n" text
// holds.
func parseChunk(text []byte) ([]jsonlRecord, int) {
	// One record a line: sized up front, since growing a slice of 100k
	// records by doubling was a tenth of loading a large export.
	lines := bytes.Count(text, []byte{'\n'})
	recs := make([]jsonlRecord, 0, lines+1)
	names := map[string]string{} // session ids and dirs: a few, many times over
	var slab []Message           // messages in blocks, not one by one
	for lineNo, line := range jsonlLines(text) {
		rec := jsonlRecord{line: lineNo}
		l, err := parseLine(line, names)
		switch {
		case err != nil:
			rec.early = err.Error()
		case l.Session == "":
			rec.early = `missing "session"`
		case l.Info != nil:
			rec.session = l.Session
			rec.info = new(SessionInfo)
			if err := json.Unmarshal(l.Info, rec.info); err != nil {
				rec.late = fmt.Sprintf("info: %v", err)
			}
			rec.info.ID = l.Session
		default:
			rec.session = l.Session
			if len(slab) == cap(slab) {
				slab = make([]Message, 0, 1024)
			}
			slab = append(slab, Message{Session: l.Session, Seq: l.Seq, HTTP: l.HTTP, Note: l.Note})
			m := &slab[len(slab)-1]
			rec.msg = m
			rec.late = l.finish(m)
		}
		recs = append(recs, rec)
		if rec.early != "" || rec.late != "" {
			break
		}
	}
	return recs, lines
}

// jsonlLines yields the lines of text that are not blank, each with its
// "\n" and its number from 1.
func jsonlLines(text []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for n := 1; len(text) > 0; n++ {
			line := text
			if nl := bytes.IndexByte(text, '\n'); nl >= 0 {
				line = text[:nl+1]
			}
			text = text[len(line):]
			if len(bytes.TrimSpace(line)) > 0 && !yield(n, line) {
				return
			}
		}
	}
}

// finish fills in m's direction, time and frame from l; it returns what is
// wrong, if anything.
func (l *messageLine) finish(m *Message) string {
	var ok bool
	if m.Dir, ok = ParseDir(l.Dir); !ok {
		return fmt.Sprintf(`dir %q (want "c2s" or "s2c")`, l.Dir)
	}
	t, err := exportTime(l.Time)
	if err != nil {
		return fmt.Sprintf("time: %v", err)
	}
	m.Time = t.UTC()
	switch {
	case l.Raw != nil:
		m.Frame = []byte(*l.Raw)
	case l.RawBase64 != nil:
		m.Frame = l.RawBase64
	case l.Message != nil:
		m.Frame = l.Message
	default:
		return `neither "message" nor "raw"`
	}
	return ""
}

// exportTime reads a line's "time", raw JSON: the string it holds, as
// time.Parse(time.RFC3339Nano, s) reads it. What exports write (timeLayout
// in UTC, a plain string) it reads by hand, without making a string of
// it: time.Parse was a tenth of reading an export. Anything else, errors
// included, is left to time.Parse.
func exportTime(raw []byte) (time.Time, error) {
	if len(raw) == len(`""`)+len(timeLayout)-len("Z07:00")+1 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		if t, ok := quickTime(raw[1 : len(raw)-1]); ok {
			return t, nil
		}
	}
	s, _ := jsonrpc.String(raw)
	return time.Parse(time.RFC3339Nano, s)
}

// quickTime reads b if it is in timeLayout, in UTC, and a time
// time.Parse accepts.
func quickTime(b []byte) (time.Time, bool) {
	if b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[19] != '.' || b[29] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range b[from:to] {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec, nsec := num(11, 13), num(14, 16), num(17, 19), num(20, 29)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
		minute < 0 || minute > 59 || sec < 0 || sec > 59 || nsec < 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // past the month's end: time.Parse says so
		return time.Time{}, false
	}
	return t, true
}

// internString decodes a JSON string value, handing out one copy of each
// plain string it sees often.
func internString(v []byte, names map[string]string) (string, bool) {
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 {
		if s, ok := names[string(v[1:len(v)-1])]; ok {
			return s, true
		}
	}
	s, ok := jsonrpc.String(v)
	if ok && len(names) < 64 {
		names[s] = s
	}
	return s, ok
}

// parseLine reads one JSONL line without reflection. Frames share the
// line's memory. names interns session ids and dirs.
func parseLine(line []byte, names map[string]string) (messageLine, error) {
	var l messageLine
	var err error
	set := func(what string, e error) {
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %v", what, e)
		}
	}
	valid := jsonrpc.Members(line, func(name, v []byte) {
		if string(v) == "null" {
			return
		}
		switch string(name) {
		case "session":
			var ok bool
			if l.Session, ok = internString(v, names); !ok {
				set("session", errors.New("not a string"))
			}
		case "info":
			l.Info = v
		case "seq":
			var e error
			l.Seq, e = strconv.ParseUint(string(v), 10, 64)
			set("seq", e)
		case "dir":
			l.Dir, _ = internString(v, names)
		case "time":
			l.Time = v
		case "message":
			l.Message = v
		case "raw":
			var raw string
			set("raw", json.Unmarshal(v, &raw))
			l.Raw = &raw
		case "raw_base64":
			// Into a variable of its own: &l.RawBase64 would put every
			// line's l on the heap.
			var b []byte
			set("raw_base64", json.Unmarshal(v, &b))
			l.RawBase64 = b
		case "http":
			l.HTTP = new(HTTPMeta)
			set("http", json.Unmarshal(v, l.HTTP))
		case "note":
			var ok bool
			if l.Note, ok = jsonrpc.String(v); !ok {
				set("note", errors.New("not a string"))
			}
		default:
			set("unknown field "+strconv.Quote(string(name)), errors.New("not part of the format"))
		}
	})
	if !valid {
		return l, errors.New("not a JSON object")
	}
	return l, err
}

// Load reads a cassette (.db) or an export (.jsonl) whole.
func Load(path string) (*Tape, error) {
	if strings.EqualFold(filepath.Ext(path), ".jsonl") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return readJSONL(data, path)
	}
	t := &Tape{}
	err := View(path, func(r *Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, info := range infos {
			s := TapeSession{Info: info}
			if s.Messages, err = r.loadMessages(info.ID); err != nil {
				return err
			}
			t.Sessions = append(t.Sessions, s)
		}
		return nil
	})
	return t, err
}

// loadMessages is Messages for Load: it reads a whole session, so it sizes
// the list once and takes messages and frames from blocks, not one
// allocation each; a third of loading a large .db went on those.
func (r *Reader) loadMessages(session string) ([]*Message, error) {
	b := r.sub(bucketMessages, session)
	if b == nil {
		return nil, nil
	}
	blobs := r.sub(bucketBlobs, session)
	// Seqs are dense from 1, so the last is the count; a damaged file may
	// claim any, so it is only a hint, and a bounded one.
	hint := 0
	if k, _ := b.Cursor().Last(); len(k) == 8 {
		hint = int(min(binary.BigEndian.Uint64(k), 1<<20))
	}
	out := make([]*Message, 0, hint)
	var slab []Message
	var arena frameArena
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(slab) == cap(slab) {
			slab = make([]Message, 0, min(max(hint-len(out), 16), 4096))
		}
		slab = append(slab, Message{Session: session, Seq: binary.BigEndian.Uint64(k)})
		m := &slab[len(slab)-1]
		if err := decodeRecordInto(v, m, blobs, &arena); err != nil {
			return nil, fmt.Errorf("%s: %w: session %s seq %d: %v", r.path, ErrCorrupt, session, m.Seq, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Import writes a tape into the cassette at path, keeping session ids, in
// one transaction. A session id already in the cassette is an error.
func Import(path string, t *Tape) error {
	if err := Init(path); err != nil {
		return err
	}
	return update(path, func(tx *bolt.Tx) error {
		sessions := tx.Bucket(bucketSessions)
		for i := range t.Sessions {
			s := &t.Sessions[i]
			if sessions.Get([]byte(s.Info.ID)) != nil {
				return fmt.Errorf("import into %s: session %q exists already", path, s.Info.ID)
			}
			if err := putInfo(tx, &s.Info); err != nil {
				return err
			}
			// Keep NextSequence past imported ids, so new recordings don't
			// collide with them.
			if n, err := strconv.ParseUint(strings.TrimPrefix(s.Info.ID, "s"), 10, 64); err == nil && n > sessions.Sequence() {
				if err := sessions.SetSequence(n); err != nil {
					return err
				}
			}
			sb, err := openSessionBuckets(tx, s.Info.ID)
			if err != nil {
				return err
			}
			for _, m := range s.Messages {
				sum := Summarize(m)
				e, err := encodeMessage(m, &sum)
				if err != nil {
					return err
				}
				if err := sb.put(m.Seq, e); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
