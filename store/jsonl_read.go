package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcptape/mcptape/internal/utf8bom"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Reading an export: the text is read in pieces, workers parse whole
// lines (jsonl_line.go), and the pieces are checked in file order.

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
	r = utf8bom.Reader(r) // an export saved again by a Windows editor
	f := newChunkFeed()
	defer f.stop()
	ck := newChunkCheck(name)
	var textErr error
	// The text goes into one buffer when its size is known (and one byte
	// more, to see the end, as os.ReadFile does): the heap then grows by
	// one block without pointers, and the GC marks less on the way than
	// when it grows piece by piece.
	buf := make([]byte, 0, max(size+1, jsonlChunk))
	start := 0   // the first byte not yet handed out
	lineEnd := 0 // just past the last newline read; each byte is looked at once
	for eof := false; !eof; {
		if len(buf) == cap(buf) {
			// Full: go on in a new buffer, with the line begun.
			rest := buf[start:]
			nb := make([]byte, len(rest), len(rest)+min(max(2*cap(buf), jsonlChunk), 64<<20))
			copy(nb, rest)
			lineEnd = max(lineEnd-start, 0)
			buf, start = nb, 0
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+jsonlChunk)])
		buf = buf[:len(buf)+n]
		if i := bytes.LastIndexByte(buf[len(buf)-n:], '\n'); i >= 0 {
			lineEnd = len(buf) - n + i + 1
		}
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return nil, readError{err}
		}
		// Hand the workers whole lines, a chunk's worth at a time. A
		// line longer than a chunk is not searched again for its end at
		// each read: that made a long line read in small pieces (a pipe)
		// cost its length squared.
		if end := len(buf); eof || end-start >= jsonlChunk {
			if !eof {
				end = max(lineEnd, start) // start: no whole line yet
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
	for i := range ck.t.Sessions {
		s := &ck.t.Sessions[i]
		s.Info.fillGaps(s.firstTime)
	}
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
				c.bad = &chunkBad{rec: rec, late: infoProblem(err)}
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
