package replay

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Taking a cassette's frames apart for matching: each frame's kind, id,
// method and canonical key, parsed on as many goroutines as there are
// cores, handed to the builder in order.

// parsed is one frame taken apart.
type parsed struct {
	ok      bool
	id      []byte // raw JSON; nil when absent or null
	method  string
	hasMeth bool
	params  json.RawMessage
	result  json.RawMessage
	err     json.RawMessage
	key     []byte // match key (see appendKey), computed on the parsing workers
	hash    uint64 // of key
	// redacted: the canonical params may hold a "[redacted]" member
	// (redactedNames.add has a look)
	redacted bool
	// asks: a response's result has resultType "input_required"
	asks bool
	// stateless: a client request whose _meta names 2026-07-28 or later
	stateless bool
	token     string
}

// parser is the state of one parsing worker.
type parser struct {
	seed maphash.Seed
	// names interns method names: a cassette repeats a handful of them
	// many thousand times.
	names map[string]string
	// arena holds the match keys, one after the other: one allocation per
	// block instead of one per request. The indexes copy them in recorded
	// order (see buildKeyIndex), and let these go.
	arena []byte
	// ignore names the members left out of match keys (Ignore).
	ignore []string
}

func newParser(seed maphash.Seed, ignore []string) *parser {
	return &parser{seed: seed, names: map[string]string{}, ignore: ignore}
}

func (ps *parser) intern(raw []byte) string {
	if s, ok := ps.names[string(raw)]; ok {
		return s
	}
	s := keyString(raw)
	ps.names[string(raw)] = s
	return s
}

// arenaBlock is the size of a block of match keys.
const arenaBlock = 64 << 10

// key writes the match key of a request into the arena. Params that do
// not canonicalize get the key of a request without params, as before.
func (ps *parser) key(method string, params []byte) (key, token []byte, redacted bool) {
	if size := len(method) + 1 + len(params); size > inlineKeyMax {
		// A key the index leaves where it is written (inlineKeyMax): a
		// buffer of its own, of about its size (canonical params are
		// seldom longer than params as written, and an object's members
		// are mostly put in order where they lie), not a share of an
		// arena block sized twice over for members written again.
		key, token, redacted, ok := appendKeyNoted(make([]byte, 0, size), method, params)
		if !ok {
			key, token, redacted = []byte(method+"\x00"), nil, false
		}
		return key[:len(key):len(key)], token, redacted
	}
	// Canonical params are seldom longer than params as written; putting
	// an object's members in order takes as much again past them, for a
	// moment (canonizer.object).
	if need := len(method) + 1 + 2*len(params); cap(ps.arena)-len(ps.arena) < need {
		ps.arena = make([]byte, 0, max(arenaBlock, 2*need))
	}
	start := len(ps.arena)
	// Appended from start: a key that outgrows the block after all is
	// copied alone, not with the block before it.
	free := ps.arena[start:start]
	key, token, redacted, ok := appendKeyNoted(free, method, params)
	if !ok {
		key, token, redacted = append(append(free, method...), 0), nil, false
	}
	if &key[0] == &ps.arena[:start+1][start] { // still in the block
		ps.arena = ps.arena[:start+len(key)]
	}
	return key[:len(key):len(key)], token, redacted
}

func (ps *parser) parseFrame(m *store.Message) parsed {
	frame, dir := m.Frame, m.Dir
	var f rpcFields
	var err error
	if parts, ok := m.RPC(); ok {
		// The store split the frame as it read it: a valid object,
		// whose members are where splitRPC would find them.
		f = rpcFields{
			id: parts.ID.Of(frame), method: parts.Method.Of(frame), params: parts.Params.Of(frame),
			result: parts.Result.Of(frame), err: parts.Error.Of(frame),
		}
	} else {
		f, err = splitRPC(frame)
	}
	id, method := f.id, f.method
	p := parsed{params: f.params, result: f.result, err: f.err}
	if err != nil || (method != nil && method[0] != '"') {
		return parsed{}
	}
	p.ok = true
	if len(id) > 0 && string(id) != "null" {
		p.id = id
	}
	if method == nil {
		if dir == store.S2C && p.result != nil {
			p.asks = jsonrpc.AsksForInput(p.result)
		}
		return p
	}
	p.hasMeth = true
	p.method = ps.intern(method)
	var tok []byte
	switch {
	case dir == store.C2S:
		p.key, tok, p.redacted = ps.key(p.method, p.params)
		p.key = blankIgnored(p.key, p.method, ps.ignore)
		p.hash = maphash.Bytes(ps.seed, p.key)
		p.stateless = p.id != nil && statelessMeta(p.params)
	case p.method == "notifications/progress":
		tok = jsonrpc.Member(p.params, "progressToken")
	}
	if len(tok) > 0 && string(tok) != "null" {
		// Compared only, request's with progress's: by value, as ids
		// are, so that 1.0 is the token 1.
		p.token = jsonrpc.CanonicalIDString(string(tok))
	}
	return p
}

// statelessMeta says whether request params carry the _meta protocol
// version of 2026-07-28 or later.
func statelessMeta(params []byte) bool {
	if !bytes.Contains(params, []byte(metaVersionKey)) {
		return false
	}
	v, _ := jsonrpc.String(jsonrpc.Member(params, "_meta", metaVersionKey))
	return v >= statelessVersion
}

// parseBlock is how many frames a parsing worker takes at a time.
const parseBlock = 1024

// parsedFrames parses msgs on every core (loading a large cassette is
// dominated by JSON decoding) and yields them in recorded order, a block
// at a time as blocks are done: what runs on one core after parsing
// (addSession) runs while later frames are parsed, and only a few blocks
// of results are held at once, not a 200-byte parsed per frame.
func parsedFrames(msgs []*store.Message, seed maphash.Seed, ignore []string) iter.Seq2[int, *parsed] {
	return func(yield func(int, *parsed) bool) {
		workers := runtime.GOMAXPROCS(0)
		if len(msgs) < 2*parseBlock || workers < 2 {
			ps := newParser(seed, ignore)
			for i, m := range msgs {
				p := ps.parseFrame(m)
				if !yield(i, &p) {
					return
				}
			}
			return
		}
		blocks := (len(msgs) + parseBlock - 1) / parseBlock
		ready := make([]chan []parsed, blocks) // each gets its block's results once
		for k := range ready {
			ready[k] = make(chan []parsed, 1)
		}
		// Result buffers go round. A worker takes a buffer before it takes
		// the next block, and blocks are taken in order: so the block the
		// loop below waits for is either being parsed or next to be
		// taken, by a worker holding a buffer or about to get one back.
		free := make(chan []parsed, workers+1)
		for range workers + 1 {
			free <- make([]parsed, parseBlock)
		}
		var next atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ps := newParser(seed, ignore) // one per worker: no locking
				for {
					var buf []parsed
					select {
					case buf = <-free:
					case <-stop:
						return
					}
					k := int(next.Add(1)) - 1
					if k >= blocks {
						return
					}
					lo, hi := k*parseBlock, min((k+1)*parseBlock, len(msgs))
					buf = buf[:hi-lo]
					for i := lo; i < hi; i++ {
						buf[i-lo] = ps.parseFrame(msgs[i])
					}
					ready[k] <- buf // buffered: never waits
				}
			}()
		}
		defer func() {
			close(stop)
			wg.Wait()
		}()
		for k := range blocks {
			buf := <-ready[k]
			for j := range buf {
				if !yield(k*parseBlock+j, &buf[j]) {
					return
				}
			}
			free <- buf[:cap(buf)] // room for every buffer: never waits
		}
	}
}
