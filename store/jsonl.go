package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	Time      string
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
}

func newJSONLEncoder(w io.Writer) *jsonlEncoder {
	e := &jsonlEncoder{w: bufio.NewWriterSize(w, 256<<10)}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
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

	trimmed := bytes.TrimSpace(m.Frame)
	switch {
	case json.Valid(trimmed) && !bytes.ContainsAny(trimmed, "\r\n"):
		line = append(line, `,"message":`...)
		line = append(line, trimmed...)
		if len(trimmed) != len(m.Frame) {
			line = append(line, `,"raw":`...)
			line, err = e.value(line, string(m.Frame))
		}
	case json.Valid(trimmed):
		var c bytes.Buffer
		_ = json.Compact(&c, trimmed)
		line = append(line, `,"message":`...)
		line = append(line, c.Bytes()...)
		line = append(line, `,"raw":`...)
		line, err = e.value(line, string(m.Frame))
	case utf8.Valid(m.Frame):
		line = append(line, `,"raw":`...)
		line, err = e.value(line, string(m.Frame))
	default:
		line = append(line, `,"raw_base64":`...)
		line, err = e.value(line, m.Frame)
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
// cassette at path to w as JSONL.
func Export(path string, w io.Writer, sessions []string) error {
	e := newJSONLEncoder(w)
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

// WriteJSONL writes a tape as JSONL.
func WriteJSONL(w io.Writer, t *Tape) error {
	e := newJSONLEncoder(w)
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
// session's header must come before its messages.
func ReadJSONL(r io.Reader, name string) (*Tape, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	t := &Tape{}
	index := map[string]int{}
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return t, nil
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		fail := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %w: %s", name, lineNo, ErrJSONL, fmt.Sprintf(format, a...))
		}
		l, err := parseLine(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		if l.Session == "" {
			return nil, fail(`missing "session"`)
		}
		if l.Info != nil {
			if _, dup := index[l.Session]; dup {
				return nil, fail("second header for session %q", l.Session)
			}
			var info SessionInfo
			if err := json.Unmarshal(l.Info, &info); err != nil {
				return nil, fail("info: %v", err)
			}
			info.ID = l.Session
			index[l.Session] = len(t.Sessions)
			t.Sessions = append(t.Sessions, TapeSession{Info: info})
			continue
		}
		i, ok := index[l.Session]
		if !ok {
			return nil, fail("message for session %q before its header line", l.Session)
		}
		s := &t.Sessions[i]
		m := &Message{Session: l.Session, Seq: l.Seq, HTTP: l.HTTP, Note: l.Note}
		if want := uint64(len(s.Messages) + 1); l.Seq != want {
			return nil, fail("seq %d, want %d (seqs run from 1 without gaps)", l.Seq, want)
		}
		if m.Dir, ok = ParseDir(l.Dir); !ok {
			return nil, fail(`dir %q (want "c2s" or "s2c")`, l.Dir)
		}
		if m.Time, err = time.Parse(time.RFC3339Nano, l.Time); err != nil {
			return nil, fail("time: %v", err)
		}
		m.Time = m.Time.UTC()
		switch {
		case l.Raw != nil:
			m.Frame = []byte(*l.Raw)
		case l.RawBase64 != nil:
			m.Frame = l.RawBase64
		case l.Message != nil:
			m.Frame = []byte(l.Message)
		default:
			return nil, fail(`neither "message" nor "raw"`)
		}
		s.Messages = append(s.Messages, m)
	}
}

// parseLine reads one JSONL line without reflection: replaying a 100k-line
// export starts with reading all of it. Frames share the line's memory.
func parseLine(line []byte) (messageLine, error) {
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
			if l.Session, ok = jsonrpc.String(v); !ok {
				set("session", errors.New("not a string"))
			}
		case "info":
			l.Info = v
		case "seq":
			var e error
			l.Seq, e = strconv.ParseUint(string(v), 10, 64)
			set("seq", e)
		case "dir":
			l.Dir, _ = jsonrpc.String(v)
		case "time":
			l.Time, _ = jsonrpc.String(v)
		case "message":
			l.Message = v
		case "raw":
			var raw string
			set("raw", json.Unmarshal(v, &raw))
			l.Raw = &raw
		case "raw_base64":
			set("raw_base64", json.Unmarshal(v, &l.RawBase64))
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
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadJSONL(f, path)
	}
	t := &Tape{}
	err := View(path, func(r *Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, info := range infos {
			s := TapeSession{Info: info}
			if err := r.Messages(info.ID, 1, func(m *Message) error {
				s.Messages = append(s.Messages, m)
				return nil
			}); err != nil {
				return err
			}
			t.Sessions = append(t.Sessions, s)
		}
		return nil
	})
	return t, err
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
				sum := summarize(m)
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
