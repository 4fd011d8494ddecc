package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

// firstTime is the time of the session's first message, zero if it has
// none.
func (s *TapeSession) firstTime() time.Time {
	if len(s.Messages) == 0 {
		return time.Time{}
	}
	return s.Messages[0].Time
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
	// mapMessage and mapInfo, if not nil, give what to write for a
	// message and for a session's info.
	mapMessage func(*Message) *Message
	mapInfo    func(*SessionInfo) *SessionInfo
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

// MapSessionInfo writes, for each session's info, the info fn returns:
// info itself or a changed copy (mcpspy export --redact). fn must not
// change info.
func MapSessionInfo(fn func(info *SessionInfo) *SessionInfo) ExportOption {
	return func(e *jsonlEncoder) { e.mapInfo = fn }
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
	if e.mapInfo != nil {
		info = e.mapInfo(info)
	}
	// Which process recorded a session matters only on the machine that
	// recorded it, while it runs: an export is read elsewhere, later, and
	// is often shared, so it leaves out the pid and the host name.
	if info.RecorderProcess != nil {
		c := *info
		c.RecorderProcess = nil
		info = &c
	}
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
	valid := jsonrpc.Valid(trimmed)
	switch {
	case valid && !bytes.ContainsAny(trimmed, "\r\n"):
		line = append(line, `,"message":`...)
		line = append(line, trimmed...)
		if len(trimmed) != len(frame) {
			line = append(line, `,"raw":`...)
			line, err = e.value(line, string(frame))
		}
	case valid:
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
	if WholeFile(path) {
		t, err := Load(path)
		if err != nil {
			return err
		}
		if err := t.Pick(path, sessions); err != nil {
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

// Pick keeps the sessions that names name (ids or names, as --session takes
// them), in the order first named, each once; no names keeps them all.
// path names the tape in the error for a name that names no session.
func (t *Tape) Pick(path string, names []string) error {
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

// notADirectory refuses a directory given as a file read whole (a .jsonl,
// a .har) in the words a .db directory gets, not the read's own "read
// x.jsonl: is a directory". A pipe or a device passes: it is read.
func notADirectory(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s: %w (a directory, not a file)", path, ErrNotCassette)
	}
	return nil
}

// Load reads a recording whole: a cassette, an export, a HAR, or what a
// pipe holds, as KindOf decides.
func Load(path string) (*Tape, error) {
	switch KindOf(path) {
	case KindHAR:
		return LoadHAR(path)
	case KindStream:
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadStream(f, path)
	case KindJSONL:
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := notADirectory(path); err != nil {
			return nil, err
		}
		if err := misnamed(path, KindJSONL, ErrNotJSONL); err != nil {
			return nil, err
		}
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

// Import writes a tape into the cassette at path in one transaction. Each
// session keeps its id unless the cassette holds that id already: then it
// gets the next free one, as a recording would. It returns the id each of
// t's sessions was stored under, in t's order.
func Import(path string, t *Tape) ([]string, error) {
	if err := Init(path); err != nil {
		return nil, err
	}
	ids := make([]string, len(t.Sessions))
	err := update(path, func(tx *bolt.Tx) error {
		sessions := tx.Bucket(bucketSessions)
		// The sessions that keep their ids go in first, so that a renamed
		// one cannot take the id of one later in the tape.
		for i := range t.Sessions {
			s := &t.Sessions[i]
			if sessions.Get([]byte(s.Info.ID)) != nil {
				continue
			}
			ids[i] = s.Info.ID
			// Keep NextSequence past imported ids, so new recordings don't
			// collide with them.
			if n, err := strconv.ParseUint(strings.TrimPrefix(s.Info.ID, "s"), 10, 64); err == nil && n > sessions.Sequence() {
				if err := sessions.SetSequence(n); err != nil {
					return err
				}
			}
			if err := putSession(tx, s.Info, s.Messages); err != nil {
				return err
			}
		}
		for i := range t.Sessions {
			if ids[i] != "" {
				continue
			}
			id, err := nextID(tx)
			if err != nil {
				return err
			}
			ids[i] = id
			info := t.Sessions[i].Info
			info.ID = id
			if err := putSession(tx, info, t.Sessions[i].Messages); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// putSession stores a session's info and messages under info.ID.
func putSession(tx *bolt.Tx, info SessionInfo, msgs []*Message) error {
	if err := putInfo(tx, &info); err != nil {
		return err
	}
	sb, err := openSessionBuckets(tx, info.ID)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		sum := Summarize(m)
		e, err := encodeMessage(m, &sum)
		if err != nil {
			return err
		}
		if err := sb.put(m.Seq, e); err != nil {
			return err
		}
	}
	return nil
}
