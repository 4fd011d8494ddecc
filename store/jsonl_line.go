package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonerr"
	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// One line of an export: its quick path for lines laid out as Export
// writes them, the full parse for the rest, and the frame's JSON-RPC
// parts for replay.

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
		return timeProblem(l.Time, err)
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

// exampleTime is a time as exports write it, for errors to show.
const exampleTime = `"2026-11-21T10:00:00.123456789Z"`

// timeProblem says what is wrong with a line's "time", raw JSON (nil when
// the line has none), which exportTime refused with err: in the terms of
// the format, not of time.Parse's layout string ("cannot parse "" as
// "2006"").
func timeProblem(raw []byte, err error) string {
	if raw == nil {
		return `no "time" (want an RFC 3339 time, such as ` + exampleTime + `)`
	}
	if _, ok := jsonrpc.String(raw); !ok {
		return fmt.Sprintf("time %s: want a string, an RFC 3339 time such as %s", clip(raw), exampleTime)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) && pe.Message != "" { // a field out of range: "month out of range"
		return fmt.Sprintf("time %s: %s", clip(raw), strings.TrimPrefix(pe.Message, ": "))
	}
	return fmt.Sprintf("time %s: want an RFC 3339 time, such as %s", clip(raw), exampleTime)
}

// infoProblem says what is wrong with a header's "info", which
// json.Unmarshal into a SessionInfo refused with err: the member and what
// it should be, not a Go struct field and type.
func infoProblem(err error) string {
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return "info." + jsonerr.WrongKind(te)
	case errors.As(err, &te):
		return "info: " + jsonerr.WrongKind(te)
	case errors.As(err, &pe):
		return fmt.Sprintf("info: time %q: want an RFC 3339 time, such as %s", pe.Value, exampleTime)
	}
	return "info: " + err.Error()
}

// seqProblem says what is wrong with a line's "seq", raw JSON, which
// parseSeq refused.
func seqProblem(raw []byte) error {
	return fmt.Errorf("%s: want a whole number from 1", clip(raw))
}

// clip is raw JSON as an error shows it: whole when short, else its
// start, so that a line of megabytes makes a one-line error.
func clip(raw []byte) string {
	const most = 40
	if r := []rune(string(raw)); len(r) > most {
		return string(r[:most]) + "…"
	}
	return string(raw)
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
			if l.Seq, e = parseSeq(v); e != nil {
				err = cmp.Or(err, fmt.Errorf("seq %w", seqProblem(v)))
			}
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
		return notAnObject(line)
	}
	l.split = split
	return err
}

// notAnObject says why line, which is no JSON object, is not one: where
// its JSON breaks (a line cut short, a stray character), or that it is
// JSON of another kind.
func notAnObject(line []byte) error {
	var syn *json.SyntaxError
	if errors.As(json.Unmarshal(line, new(json.RawMessage)), &syn) {
		return fmt.Errorf("not a JSON object: column %d: %v", syn.Offset, syn)
	}
	return errors.New("not a JSON object")
}
