package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// A message is stored twice under its 8-byte big-endian seq: the full
// record in "messages" and a small summary in "index". Listing a million
// messages (the inspector) reads only the summaries, which are about a tenth
// of the bytes, and never parses JSON.
//
// record:  version(1) dir(1) unixnano(8) uvarint(len meta) meta-json
//
//	uvarint(len note) note frame...
//
// summary: version(1) dir(1) unixnano(8) kind(1) flags(1) varint(errcode)
//
//	uvarint(size) then method, id, tool, progress token as
//	uvarint-length-prefixed strings.
const codecVersion = 1

const flagIsError = 1

var errShort = errors.New("truncated record")

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

func encodeRecord(m *Message) ([]byte, error) {
	var meta []byte
	if m.HTTP != nil {
		var err error
		if meta, err = json.Marshal(m.HTTP); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 10+2*binary.MaxVarintLen64+len(meta)+len(m.Note)+len(m.Frame))
	b = append(b, codecVersion, byte(m.Dir))
	b = binary.BigEndian.AppendUint64(b, uint64(m.Time.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	b = binary.AppendUvarint(b, uint64(len(m.Note)))
	b = append(b, m.Note...)
	return append(b, m.Frame...), nil
}

// decodeRecord copies everything out of v: bbolt's bytes die with the
// transaction.
func decodeRecord(v []byte, m *Message) error {
	if len(v) < 10 || v[0] != codecVersion {
		return errShort
	}
	m.Dir = Dir(v[1])
	m.Time = time.Unix(0, int64(binary.BigEndian.Uint64(v[2:10]))).UTC()
	rest := v[10:]
	meta, rest, err := readBytes(rest)
	if err != nil {
		return err
	}
	if len(meta) > 0 {
		m.HTTP = new(HTTPMeta)
		if err := json.Unmarshal(meta, m.HTTP); err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
	}
	note, rest, err := readBytes(rest)
	if err != nil {
		return err
	}
	m.Note = string(note)
	m.Frame = append([]byte(nil), rest...)
	return nil
}

func readBytes(b []byte) (field, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, errShort
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// Summary is the listing view of a message: everything but the bytes.
type Summary struct {
	Seq           uint64
	Dir           Dir
	Time          time.Time
	Kind          jsonrpc.Kind
	IsError       bool
	ErrorCode     int
	Size          int // frame length in bytes
	Method        string
	ID            string // the id's JSON text
	Tool          string
	ProgressToken string
}

func summarize(m *Message) Summary {
	c := jsonrpc.Classify(m.Frame)
	return Summary{
		Seq: m.Seq, Dir: m.Dir, Time: m.Time, Kind: c.Kind, IsError: c.IsError,
		ErrorCode: c.ErrorCode, Size: len(m.Frame), Method: c.Method, ID: c.ID,
		Tool: c.Tool, ProgressToken: c.ProgressToken,
	}
}

func encodeSummary(s *Summary) []byte {
	b := make([]byte, 0, 32+len(s.Method)+len(s.ID)+len(s.Tool)+len(s.ProgressToken))
	b = append(b, codecVersion, byte(s.Dir))
	b = binary.BigEndian.AppendUint64(b, uint64(s.Time.UnixNano()))
	var flags byte
	if s.IsError {
		flags |= flagIsError
	}
	b = append(b, byte(s.Kind), flags)
	b = binary.AppendVarint(b, int64(s.ErrorCode))
	b = binary.AppendUvarint(b, uint64(s.Size))
	for _, str := range []string{s.Method, s.ID, s.Tool, s.ProgressToken} {
		b = binary.AppendUvarint(b, uint64(len(str)))
		b = append(b, str...)
	}
	return b
}

// decodeSummary copies strings through intern, which lets a caller holding a
// million summaries share one string per distinct method or tool.
func decodeSummary(v []byte, s *Summary, intern func([]byte) string) error {
	if len(v) < 12 || v[0] != codecVersion {
		return errShort
	}
	s.Dir = Dir(v[1])
	s.Time = time.Unix(0, int64(binary.BigEndian.Uint64(v[2:10]))).UTC()
	s.Kind = jsonrpc.Kind(v[10])
	s.IsError = v[11]&flagIsError != 0
	rest := v[12:]
	code, k := binary.Varint(rest)
	if k <= 0 {
		return errShort
	}
	s.ErrorCode = int(code)
	rest = rest[k:]
	size, k := binary.Uvarint(rest)
	if k <= 0 {
		return errShort
	}
	s.Size = int(size)
	rest = rest[k:]
	for _, dst := range []*string{&s.Method, &s.ID, &s.Tool, &s.ProgressToken} {
		var f []byte
		var err error
		if f, rest, err = readBytes(rest); err != nil {
			return err
		}
		if intern != nil {
			*dst = intern(f)
		} else {
			*dst = string(f)
		}
	}
	return nil
}
