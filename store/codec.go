package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	bolt "go.etcd.io/bbolt"
)

// A message is stored twice under its 8-byte big-endian seq: the full
// record in "messages" and a small summary in "index". Listing a million
// messages (the inspector) reads only the summaries, which are about a tenth
// of the bytes, and never parses JSON.
//
//	record:  version(1) dir(1) unixnano(8) uvarint(len meta) meta-json
//	         uvarint(len note) note frame...
//	summary: version(1) dir(1) unixnano(8) kind(1) flags(1) varint(errcode)
//	         uvarint(size), then method, id, tool, progress token as
//	         uvarint-length-prefixed strings.
//
// A frame over chunkSize is not copied into its record (version 2, whose
// tail is uvarint(frame length) instead of the frame): it is stored in
// chunkSize pieces in "blobs" under seq+chunk number, as sub-slices of the
// frame the proxy read. A large value would otherwise be held three times
// at commit (frame, record, bbolt's page), and every later commit to the
// session would rewrite the leaf page that held it.
const (
	codecVersion   = 1
	chunkedVersion = 2
	chunkSize      = 1 << 20
)

// Summary flags. Readers ignore the bits they do not know, so a flag
// can be added without a new codec version.
const (
	flagIsError       = 1
	flagInputRequired = 2
)

var errShort = errors.New("truncated record")

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// encodedMessage is a message ready to store: its record, its summary, and
// the chunks of a large frame.
type encodedMessage struct {
	rec, sum []byte
	chunks   [][]byte
}

var metaBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledMeta keeps the buffers of rare, huge header sets out of the pool.
const maxPooledMeta = 64 << 10

func encodeMessage(m *Message, sum *Summary) (encodedMessage, error) {
	meta, buf := pooledHTTPMeta(m.HTTP)
	defer releaseHTTPMeta(buf, meta)
	chunked := len(m.Frame) > chunkSize
	version, inline := byte(codecVersion), len(m.Frame)
	if chunked {
		version, inline = chunkedVersion, 0
	}
	b := make([]byte, 0, 10+3*binary.MaxVarintLen64+len(meta)+len(m.Note)+inline)
	b = append(b, version, byte(m.Dir))
	b = binary.BigEndian.AppendUint64(b, uint64(m.Time.UnixNano()))
	b = appendMetaFields(b, meta, m.Note)
	e := encodedMessage{sum: encodeSummary(sum)}
	if !chunked {
		e.rec = append(b, m.Frame...)
		return e, nil
	}
	e.rec = binary.AppendUvarint(b, uint64(len(m.Frame)))
	for off := 0; off < len(m.Frame); off += chunkSize {
		e.chunks = append(e.chunks, m.Frame[off:min(off+chunkSize, len(m.Frame))])
	}
	return e, nil
}

// pooledHTTPMeta is h as a record holds it (nil for none), built in a
// pooled buffer, not in one allocated and dropped per message: it is
// copied into the record, and releaseHTTPMeta(buf, meta) gives the
// buffer back.
func pooledHTTPMeta(h *HTTPMeta) (meta []byte, buf *[]byte) {
	if h == nil {
		return nil, nil
	}
	buf = metaBufs.Get().(*[]byte)
	return appendHTTPMeta((*buf)[:0], h), buf
}

func releaseHTTPMeta(buf *[]byte, meta []byte) {
	if buf != nil && cap(meta) <= maxPooledMeta {
		*buf = meta
		metaBufs.Put(buf)
	}
}

// appendMetaFields appends a record's metadata and note fields, each
// after its length.
func appendMetaFields(b, meta []byte, note string) []byte {
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	b = binary.AppendUvarint(b, uint64(len(note)))
	return append(b, note...)
}

// encodeMetaFields is what an AmendMeta puts in its message's record: the
// metadata and note fields, as a record holds them.
func encodeMetaFields(m *Message) []byte {
	meta, buf := pooledHTTPMeta(m.HTTP)
	defer releaseHTTPMeta(buf, meta)
	return appendMetaFields(make([]byte, 0, 2*binary.MaxVarintLen64+len(meta)+len(m.Note)), meta, m.Note)
}

// withMetaFields returns the record rec with fields (as encodeMetaFields
// gives them) in place of its own metadata and note: the same version,
// direction, time and tail, which is the frame itself, or the length of
// its chunks.
func withMetaFields(rec, fields []byte) ([]byte, error) {
	if len(rec) < 10 || (rec[0] != codecVersion && rec[0] != chunkedVersion) {
		return nil, errShort
	}
	_, rest, err := readBytes(rec[10:]) // metadata
	if err != nil {
		return nil, err
	}
	if _, rest, err = readBytes(rest); err != nil { // note
		return nil, err
	}
	out := make([]byte, 0, 10+len(fields)+len(rest))
	out = append(out, rec[:10]...)
	out = append(out, fields...)
	return append(out, rest...), nil
}

func chunkKey(seq uint64, i int) []byte {
	k := make([]byte, 12)
	binary.BigEndian.PutUint64(k, seq)
	binary.BigEndian.PutUint32(k[8:], uint32(i))
	return k
}

// decodeRecord copies everything out of v: bbolt's bytes die with the
// transaction. blobs is the session's chunk bucket (nil if it has none).
func decodeRecord(v []byte, m *Message, blobs *bolt.Bucket) error {
	return decodeRecordInto(v, m, blobs, nil)
}

// frameArena hands out frame copies from shared blocks. A kept frame keeps
// its block alive: for loading whole sessions, whose frames live and die
// together.
type frameArena struct{ block []byte }

// arenaBlock is the size of a frameArena block; a frame over a quarter of
// it gets an allocation of its own, so that little of a block is wasted.
const arenaBlock = 256 << 10

// copy returns a copy of b, capacity clipped so that an append to it
// cannot reach the next frame.
func (a *frameArena) copy(b []byte) []byte {
	if a == nil || len(b) == 0 || len(b) > arenaBlock/4 {
		return append([]byte(nil), b...) // nil when empty, as before
	}
	if cap(a.block)-len(a.block) < len(b) {
		a.block = make([]byte, 0, arenaBlock)
	}
	start := len(a.block)
	a.block = append(a.block, b...)
	return a.block[start:len(a.block):len(a.block)]
}

// decodeRecordInto is decodeRecord taking the frame's copy from arena (nil:
// an allocation of its own).
func decodeRecordInto(v []byte, m *Message, blobs *bolt.Bucket, arena *frameArena) error {
	if len(v) < 10 || (v[0] != codecVersion && v[0] != chunkedVersion) {
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
	if v[0] == codecVersion {
		m.Frame = arena.copy(rest)
		return nil
	}
	m.Frame, err = joinChunks(rest, m.Seq, blobs)
	return err
}

// joinChunks reassembles a chunked frame; tail is the record's tail.
func joinChunks(tail []byte, seq uint64, blobs *bolt.Bucket) ([]byte, error) {
	size, k := binary.Uvarint(tail)
	if k <= 0 || blobs == nil {
		return nil, errShort
	}
	// The size is read from the file: a damaged one must not be allocated
	// up front (it can claim more memory than the machine has).
	frame := make([]byte, 0, min(size, maxChunkedPrealloc))
	for i := 0; uint64(len(frame)) < size; i++ {
		c := blobs.Get(chunkKey(seq, i))
		if c == nil {
			return nil, fmt.Errorf("chunk %d of a %d-byte frame is missing", i, size)
		}
		frame = append(frame, c...)
	}
	if uint64(len(frame)) != size {
		return nil, fmt.Errorf("chunks hold %d bytes, record says %d", len(frame), size)
	}
	return frame, nil
}

// maxChunkedPrealloc bounds what joinChunks allocates before it has read
// a chunk.
const maxChunkedPrealloc = 64 << 20

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
	InputRequired bool // a 2026-07-28 result asking the client for input
	ErrorCode     int
	Size          int // frame length in bytes
	Method        string
	ID            string // the id's JSON text
	Tool          string
	ProgressToken string
}

// Summarize is what the store keeps of m in its index: the listing view,
// for messages that come from elsewhere (a JSONL file) too.
func Summarize(m *Message) Summary {
	c := jsonrpc.Classify(m.Frame)
	return Summary{
		Seq: m.Seq, Dir: m.Dir, Time: m.Time, Kind: c.Kind, IsError: c.IsError,
		InputRequired: c.InputRequired, ErrorCode: c.ErrorCode, Size: len(m.Frame), Method: c.Method, ID: c.ID,
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
	if s.InputRequired {
		flags |= flagInputRequired
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
	s.InputRequired = v[11]&flagInputRequired != 0
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
