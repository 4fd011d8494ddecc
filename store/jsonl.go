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
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// split says that parts holds where Message's members lie.
	split bool
	parts jsonrpc.Parts
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
	t, err := readJSONL(r, 0, name)
	var rerr readError
	if errors.As(err, &rerr) {
		return nil, fmt.Errorf("%s: %w", name, rerr.err)
	}
	return t, err
}

// readError is an error reading the text, not in it.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }

// jsonlChunk is about how much text a parsing worker takes at a time:
// small enough that the workers share the lines evenly when something
// else holds up a core for a while, large enough that taking one costs
// nothing. The text is read in pieces of this size too.
const jsonlChunk = 1 << 20

// readJSONL reads the text of r a piece at a time, and parses each
// piece's whole lines on a worker while the next is read (reading a large
// export took a tenth of loading it); as pieces are done, it checks
// what depends on the lines before (headers, seqs) in one pass in file
// order. Replaying a 100k-line export starts with reading all of it. The
// first error in file order wins, as in a line-by-line read. size is the
// text's size if known, else 0.
func readJSONL(r io.Reader, size int, name string) (*Tape, error) {
	f := newChunkFeed()
	defer f.stop()
	ck := newChunkCheck(name)
	var textErr error
	// The text goes into one buffer when its size is known (and one byte
	// more, to see the end, as os.ReadFile does): the heap then grows by
	// one block without pointers, and the GC marks less on the way than
	// when it grows piece by piece.
	buf := make([]byte, 0, max(size+1, jsonlChunk))
	start := 0 // the first byte not yet handed out
	for eof := false; !eof; {
		if len(buf) == cap(buf) {
			// Full: go on in a new buffer, with the line begun.
			rest := buf[start:]
			nb := make([]byte, len(rest), len(rest)+min(max(2*cap(buf), jsonlChunk), 64<<20))
			copy(nb, rest)
			buf, start = nb, 0
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+jsonlChunk)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return nil, readError{err}
		}
		// Hand the workers whole lines, a chunk's worth at a time.
		if end := len(buf); eof || end-start >= jsonlChunk {
			if !eof {
				end = start + bytes.LastIndexByte(buf[start:], '\n') + 1 // start: no whole line yet
			}
			if end > start {
				f.add(buf[start:end])
				start = end
			}
		}
		// Check what is done meanwhile. An error in the text waits for
		// the end of it: an error reading it wins, as when the text was
		// read whole first.
		if textErr == nil {
			if textErr = ck.ready(f); textErr != nil {
				f.firstBad.Store(-1) // nothing more needs parsing
			}
		}
	}
	if textErr != nil {
		return nil, textErr
	}
	return ck.finish(f)
}

// chunkFeed parses chunks of whole lines on every core, as they come.
type chunkFeed struct {
	jobs   chan *chunkLines
	chunks []*chunkLines // in file order
	// firstBad is the first chunk with an error: the chunks after it need
	// not be read, as the pass in file order stops at that error, or
	// before.
	firstBad atomic.Int64
	wg       sync.WaitGroup
	stopped  bool
}

func newChunkFeed() *chunkFeed {
	f := &chunkFeed{jobs: make(chan *chunkLines, 64)}
	f.firstBad.Store(math.MaxInt64)
	for range runtime.GOMAXPROCS(0) {
		f.wg.Go(func() {
			for c := range f.jobs {
				if c.k <= int(f.firstBad.Load()) {
					c.parse()
					if c.bad != nil {
						for bad := f.firstBad.Load(); int64(c.k) < bad && !f.firstBad.CompareAndSwap(bad, int64(c.k)); bad = f.firstBad.Load() {
						}
					}
				}
				close(c.done)
			}
		})
	}
	return f
}

// add hands a chunk to the workers.
func (f *chunkFeed) add(text []byte) {
	c := &chunkLines{text: text, k: len(f.chunks), done: make(chan struct{})}
	f.chunks = append(f.chunks, c)
	f.jobs <- c
}

// stop lets the workers go once the chunks handed to them are done.
func (f *chunkFeed) stop() {
	if !f.stopped {
		f.stopped = true
		close(f.jobs)
		f.wg.Wait()
	}
}

// chunkCheck is the pass in file order over the parsed chunks.
type chunkCheck struct {
	name  string
	t     *Tape
	index map[string]int // session id → place in t.Sessions
	// Lines of one session come together: the last one's place spares a
	// map look-up per line.
	lastSession string
	last        int
	lineBase    int // lines before the next chunk
	next        int // the next chunk to check
}

func newChunkCheck(name string) *chunkCheck {
	return &chunkCheck{name: name, t: &Tape{}, index: map[string]int{}, last: -1}
}

// ready checks the chunks done so far, in order.
func (ck *chunkCheck) ready(f *chunkFeed) error {
	for ; ck.next < len(f.chunks); ck.next++ {
		c := f.chunks[ck.next]
		select {
		case <-c.done:
		default:
			return nil
		}
		if err := ck.check(c); err != nil {
			return err
		}
	}
	return nil
}

// finish checks the rest of the chunks.
func (ck *chunkCheck) finish(f *chunkFeed) (*Tape, error) {
	for ; ck.next < len(f.chunks); ck.next++ {
		c := f.chunks[ck.next]
		<-c.done
		if err := ck.check(c); err != nil {
			return nil, err
		}
	}
	f.stop()
	return ck.t, nil
}

// check checks one chunk's lines against the lines before.
func (ck *chunkCheck) check(c *chunkLines) error {
	// fail names the chunk's rec-th line (of those not blank).
	fail := func(rec int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %w: %s", ck.name, ck.lineBase+c.lineOf(rec), ErrJSONL, fmt.Sprintf(format, a...))
	}
	late := func(rec int) string {
		if c.bad != nil && c.bad.rec == rec {
			return c.bad.late
		}
		return ""
	}
	h := 0 // the chunk's next header
	for k := 0; ; k++ {
		for ; h < len(c.heads) && c.heads[h].at == k; h++ {
			hd, rec := &c.heads[h], k+h
			if _, dup := ck.index[hd.session]; dup {
				return fail(rec, "second header for session %q", hd.session)
			}
			if why := late(rec); why != "" {
				return fail(rec, "%s", why)
			}
			ck.index[hd.session] = len(ck.t.Sessions)
			ck.t.Sessions = append(ck.t.Sessions, TapeSession{Info: *hd.info})
		}
		if k == c.n {
			break
		}
		m, rec := c.msg(k), k+h
		if ck.last < 0 || m.Session != ck.lastSession {
			i, ok := ck.index[m.Session]
			if !ok {
				return fail(rec, "message for session %q before its header line", m.Session)
			}
			ck.lastSession, ck.last = m.Session, i
		}
		s := &ck.t.Sessions[ck.last]
		if want := uint64(len(s.Messages) + 1); m.Seq != want {
			return fail(rec, "seq %d, want %d (seqs run from 1 without gaps)", m.Seq, want)
		}
		if why := late(rec); why != "" {
			return fail(rec, "%s", why)
		}
		s.Messages = append(s.Messages, m)
	}
	if c.bad != nil && c.bad.early != "" {
		return fail(c.bad.rec, "%s", c.bad.early)
	}
	ck.lineBase += c.lines
	return nil
}

// chunkLines is a chunk of lines, each parsed on its own. Its lines are
// numbered by rec, from 0, leaving out blank ones: the n message lines are
// in slabs, in order, and the header lines in heads, each placed before a
// message. Nothing but the line numbers of errors needs more: per line,
// only its message is kept.
type chunkLines struct {
	text  []byte
	k     int           // its place in the file
	done  chan struct{} // closed once parsed (or left unread)
	lines int           // "\n"s in text, up to the line with an error if any
	n     int
	slabs [][]jsonlMessage // of slabSize each
	heads []chunkHeader
	// bad is the first line with an error, if any: the last read.
	bad *chunkBad
}

// slabSize is how many messages a block holds: a power of two, so that
// msg finds one with a shift.
const slabSize = 1024

// msg returns message line k.
func (c *chunkLines) msg(k int) *Message { return &c.slabs[k/slabSize][k%slabSize].Message }

// chunkHeader is a header line: before message line at.
type chunkHeader struct {
	at      int
	session string
	info    *SessionInfo
}

// chunkBad is a line with an error. Its errors are kept apart by when a
// line-by-line reader would report them: early before the checks that
// depend on earlier lines, late after them (the line is then one of the
// chunk's messages or heads).
type chunkBad struct {
	rec         int
	early, late string
}

// lineOf is the number, within the chunk and from 1, of line rec. It
// reads the text again: only errors ask.
func (c *chunkLines) lineOf(rec int) int {
	k := 0
	for n := range jsonlLines(c.text) {
		if k == rec {
			return n
		}
		k++
	}
	return 0
}

// parse parses the chunk's lines up to the first with an error: nothing
// after it can matter.
func (c *chunkLines) parse() {
	text := c.text
	r := newLineReader()
	var l messageLine
	rec := 0
	for rest := text; len(rest) > 0; {
		line := rest
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			line = rest[:nl+1]
			c.lines++
		}
		rest = rest[len(line):]
		if line[0] <= ' ' && len(bytes.TrimSpace(line)) == 0 { // a line starting with '{' is not blank
			continue
		}
		var err error
		if !r.quick(&l, line) {
			err = r.parse(&l, line)
		}
		switch {
		case err != nil:
			c.bad = &chunkBad{rec: rec, early: err.Error()}
		case l.Session == "":
			c.bad = &chunkBad{rec: rec, early: `missing "session"`}
		case l.Info != nil:
			hd := chunkHeader{at: c.n, session: l.Session, info: new(SessionInfo)}
			if err := json.Unmarshal(l.Info, hd.info); err != nil {
				c.bad = &chunkBad{rec: rec, late: fmt.Sprintf("info: %v", err)}
			}
			hd.info.ID = l.Session
			c.heads = append(c.heads, hd)
		default:
			// Messages in blocks, not one by one.
			if c.n%slabSize == 0 {
				c.slabs = append(c.slabs, make([]jsonlMessage, slabSize))
			}
			jm := &c.slabs[c.n/slabSize][c.n%slabSize]
			jm.Message = Message{Session: l.Session, Seq: l.Seq, HTTP: l.HTTP, Note: l.Note}
			m := &jm.Message
			if why := r.finish(&l, m); why != "" {
				c.bad = &chunkBad{rec: rec, late: why}
			} else if l.split && l.Raw == nil && l.RawBase64 == nil {
				// The frame is the line's "message", split as the line
				// was read: replay need not read it again.
				jm.rpc = rpcParts{frame: &m.Frame[0], n: len(m.Frame), parts: l.parts}
				m.rpc = &jm.rpc
			}
			c.n++
		}
		if c.bad != nil {
			break
		}
		rec++
	}
}

// jsonlMessage is a message read from a line, with room for its frame's
// parts: the two are taken from blocks together.
type jsonlMessage struct {
	Message
	rpc rpcParts
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
func (r *lineReader) finish(l *messageLine, m *Message) string {
	var ok bool
	if m.Dir, ok = ParseDir(l.Dir); !ok {
		return fmt.Sprintf(`dir %q (want "c2s" or "s2c")`, l.Dir)
	}
	t, err := r.time(l.Time)
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

// lineReader reads lines one after the other. It keeps what the next line
// is likely to repeat: the strings it hands out often, the last session id
// and the second of the last time it read.
type lineReader struct {
	names       map[string]string
	lastSession string
	// sec is the date and time to the second ("2006-01-02T15:04:05") of
	// the last time read in timeLayout, in UTC, and secTime that second.
	sec     [19]byte
	secTime time.Time
	secOK   bool
}

func newLineReader() *lineReader { return &lineReader{names: map[string]string{}} }

// time is exportTime, quicker for a time in the same second as the last
// one: the lines of an export come a few microseconds apart, and working
// out the calendar for each was a tenth of reading one.
func (r *lineReader) time(raw []byte) (time.Time, error) {
	if len(raw) != len(`""`)+len(timeLayout)-len("Z07:00")+1 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return exportTime(raw)
	}
	b := raw[1 : len(raw)-1]
	if r.secOK && string(b[:19]) == string(r.sec[:]) && b[19] == '.' && b[29] == 'Z' {
		if ns := nineDigits(b[20:29]); ns >= 0 {
			return r.secTime.Add(time.Duration(ns)), nil
		}
	}
	t, ok := quickTime(b)
	if !ok {
		return exportTime(raw)
	}
	copy(r.sec[:], b[:19])
	r.secTime, r.secOK = t.Add(-time.Duration(t.Nanosecond())), true
	return t, nil
}

// nineDigits reads b, nine decimal digits, or returns -1.
func nineDigits(b []byte) int {
	n := 0
	for _, c := range b[:9] {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
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

// session decodes a line's session id, as internString; most often it is
// the last line's.
func (r *lineReader) session(v []byte) (string, bool) {
	if s := r.lastSession; len(v) == len(s)+2 && v[0] == '"' && string(v[1:len(v)-1]) == s && bytes.IndexByte(v, '\\') < 0 {
		return s, true
	}
	s, ok := internString(v, r.names)
	if ok {
		r.lastSession = s
	}
	return s, ok
}

// parseSeq is strconv.ParseUint(string(v), 10, 64), errors included,
// quicker for a plain number that fits.
func parseSeq(v []byte) (uint64, error) {
	if len(v) > 0 && len(v) < 20 {
		var n uint64
		for _, c := range v {
			if c < '0' || c > '9' {
				return strconv.ParseUint(string(v), 10, 64)
			}
			n = n*10 + uint64(c-'0')
		}
		return n, nil
	}
	return strconv.ParseUint(string(v), 10, 64)
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

// quick reads a message line as exports write it, its members in their
// order: {"session":…,"seq":…,"dir":…,"time":…,"message":{…}}, the
// session without escapes. It says false for any other line, which parse
// then reads, errors and all. A line it reads, parse reads the same:
// quick only spares looking up each member by name (a third of reading
// a line).
func (r *lineReader) quick(l *messageLine, line []byte) bool {
	b := line
	// Each member name is compared as a constant string: the compiler
	// compares whole words.
	const pSession = `{"session":`
	if len(b) < len(pSession) || string(b[:len(pSession)]) != pSession {
		return false
	}
	i := len(pSession)
	end, escaped, ok := jsonrpc.SkipString(b, i)
	if !ok || escaped {
		return false
	}
	sess := b[i:end]
	const pSeq = `,"seq":`
	if i = end; len(b)-i < len(pSeq) || string(b[i:i+len(pSeq)]) != pSeq {
		return false
	}
	i += len(pSeq)
	// A number as JSON writes one (no leading zeros) that fits, read as
	// parseSeq reads it.
	j, n := i, uint64(0)
	for ; j < len(b) && '0' <= b[j] && b[j] <= '9'; j++ {
		n = n*10 + uint64(b[j]-'0')
	}
	if j == i || j-i >= 20 || (b[i] == '0' && j-i > 1) {
		return false
	}
	const pC2S, pS2C = `,"dir":"c2s"`, `,"dir":"s2c"`
	var dir string
	switch i = j; {
	case len(b)-i < len(pC2S):
		return false
	case string(b[i:i+len(pC2S)]) == pC2S:
		dir = "c2s"
	case string(b[i:i+len(pS2C)]) == pS2C:
		dir = "s2c"
	default:
		return false
	}
	const pTime = `,"time":`
	if i += len(pC2S); len(b)-i < len(pTime) || string(b[i:i+len(pTime)]) != pTime {
		return false
	}
	i += len(pTime)
	if end, _, ok = jsonrpc.SkipString(b, i); !ok {
		return false
	}
	timeText := b[i:end]
	const pMessage = `,"message":`
	if i = end; len(b)-i < len(pMessage) || string(b[i:i+len(pMessage)]) != pMessage {
		return false
	}
	i += len(pMessage)
	var parts jsonrpc.Parts
	var split bool
	if end, split, ok = jsonrpc.SplitValue(b, i, &parts); !ok {
		return false
	}
	msg := b[i:end]
	if i = end; i >= len(b) || b[i] != '}' {
		return false
	}
	for i++; i < len(b); i++ {
		if c := b[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	id, _ := r.session(sess)
	*l = messageLine{Session: id, Seq: n, Dir: dir, Time: timeText, Message: msg, split: split, parts: parts}
	return true
}

// parse reads one JSONL line into l, which it clears first, without
// reflection. Frames share the line's memory. When "message" is an
// object, it is split as it is read (l.split, l.parts).
func (r *lineReader) parse(l *messageLine, line []byte) error {
	*l = messageLine{}
	var err error
	set := func(what string, e error) {
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %v", what, e)
		}
	}
	valid, split := jsonrpc.MembersSplit(line, "message", &l.parts, func(name, v []byte) {
		if string(v) == "null" {
			return
		}
		switch string(name) {
		case "session":
			var ok bool
			if l.Session, ok = r.session(v); !ok {
				set("session", errors.New("not a string"))
			}
		case "info":
			l.Info = v
		case "seq":
			var e error
			l.Seq, e = parseSeq(v)
			set("seq", e)
		case "dir":
			switch string(v) {
			case `"c2s"`:
				l.Dir = "c2s"
			case `"s2c"`:
				l.Dir = "s2c"
			default:
				l.Dir, _ = internString(v, r.names)
			}
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
		return errors.New("not a JSON object")
	}
	l.split = split
	return err
}

// Load reads a cassette (.db) or an export (.jsonl) whole.
func Load(path string) (*Tape, error) {
	if strings.EqualFold(filepath.Ext(path), ".jsonl") {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		size := 0
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && int64(int(st.Size())) == st.Size() {
			size = int(st.Size())
		}
		t, err := readJSONL(f, size, path)
		var rerr readError
		if errors.As(err, &rerr) {
			return nil, rerr.err
		}
		return t, err
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
