package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/store"
)

// A cassette source is built once, at load: every recorded request becomes
// an interaction holding its answer and the server-initiated traffic that
// belongs to it, and the interactions are indexed by method plus canonical
// params. Answering is then a map look-up, whatever the cassette's size.

// CassetteOption configures LoadCassette.
type CassetteOption func(*cassetteConfig)

type cassetteConfig struct {
	sessions []string
}

// Sessions replays only the recorded sessions with these ids or names
// (default: all of them, pooled in recorded order).
func Sessions(names ...string) CassetteOption {
	return func(c *cassetteConfig) { c.sessions = append(c.sessions, names...) }
}

// Cassette is a Source answering from a recording.
type Cassette struct {
	name  string
	match matcher

	reqs     []*interaction            // requests in recorded order
	byKey    map[string][]*interaction // method+canonical params → occurrences
	byMethod map[string][]*interaction
	notes    map[string][]*interaction // client notifications with traffic after them
	dropped  int                       // server messages with nothing to attach to
}

// interaction is one recorded request (or client notification) and what
// the server did about it.
type interaction struct {
	sess   string // recorded session id
	seq    uint64
	src    *Cassette
	method string
	canon  string
	key    string
	token  string // the recorded progressToken
	stream uint64 // HTTP stream the request travelled on
	t0     time.Time

	answered  bool
	cancelled bool // the client cancelled it before any answer
	result    json.RawMessage
	rpcErr    *RPCError
	sse       bool // the answer was an SSE stream over Streamable HTTP
	replyAt   time.Duration
	during    []step
	after     []Outgoing
	used      atomic.Bool
}

// step is a message the server sent while a request was in flight.
type step struct {
	out      Outgoing
	progress bool // notifications/progress: re-keyed to the live token
	at       time.Duration
}

// LoadCassette reads a cassette (.db) or its JSONL export (.jsonl).
func LoadCassette(path string, opts ...CassetteOption) (*Cassette, error) {
	var cfg cassetteConfig
	for _, o := range opts {
		o(&cfg)
	}
	tape, err := store.Load(path)
	if err != nil {
		return nil, fmt.Errorf("load cassette: %w", err)
	}
	return newCassette(filepath.Base(path), tape, cfg)
}

// NewCassette builds a source from a tape already in memory.
func NewCassette(name string, tape *store.Tape, opts ...CassetteOption) (*Cassette, error) {
	var cfg cassetteConfig
	for _, o := range opts {
		o(&cfg)
	}
	return newCassette(name, tape, cfg)
}

func newCassette(name string, tape *store.Tape, cfg cassetteConfig) (*Cassette, error) {
	sessions := tape.Sessions
	if len(cfg.sessions) > 0 {
		sessions = nil
		for _, want := range cfg.sessions {
			found := false
			for _, s := range tape.Sessions {
				if s.Info.ID == want || s.Info.Name == want {
					sessions = append(sessions, s)
					found = true
				}
			}
			if !found {
				return nil, fmt.Errorf("%s: %w %q", name, store.ErrNoSession, want)
			}
		}
	}
	c := &Cassette{
		name:     name,
		byKey:    map[string][]*interaction{},
		byMethod: map[string][]*interaction{},
		notes:    map[string][]*interaction{},
	}
	for i := range sessions {
		c.addSession(&sessions[i])
	}
	return c, nil
}

// parsed is one frame taken apart.
type parsed struct {
	ok      bool
	id      []byte // raw JSON; nil when absent or null
	method  string
	hasMeth bool
	params  json.RawMessage
	result  json.RawMessage
	err     json.RawMessage
	canon   string
	key     string // matchKey, computed on the parsing workers
	token   string
}

// methods interns method names: a cassette repeats a handful of them
// many thousand times.
type methods map[string]string

func (m methods) intern(raw []byte) string {
	if s, ok := m[string(raw)]; ok {
		return s
	}
	s := keyString(raw)
	m[string(raw)] = s
	return s
}

func parseFrame(frame []byte, dir store.Dir, names methods) parsed {
	var p parsed
	var id, method []byte
	err := objectFields(frame, func(k, v []byte) {
		switch string(k) {
		case `"id"`:
			id = v
		case `"method"`:
			method = v
		case `"params"`:
			p.params = v
		case `"result"`:
			p.result = v
		case `"error"`:
			p.err = v
		}
	})
	if err != nil || (method != nil && method[0] != '"') {
		return parsed{}
	}
	p.ok = true
	if len(id) > 0 && string(id) != "null" {
		p.id = id
	}
	if method == nil {
		return p
	}
	p.hasMeth = true
	p.method = names.intern(method)
	var tok []byte
	switch {
	case dir == store.C2S:
		// One allocation for key and canon: canon is the key's tail.
		buf := make([]byte, 0, len(p.method)+1+len(p.params))
		buf = append(append(buf, p.method...), 0)
		buf, tok, _ = appendCanonToken(buf, p.method, p.params)
		p.key = string(buf)
		p.canon = p.key[len(p.method)+1:]
	case p.method == "notifications/progress":
		tok = fieldOf(p.params, "progressToken")
	}
	if len(tok) > 0 && string(tok) != "null" {
		p.token = string(tok)
	}
	return p
}

// parseAll parses frames on every core: loading a large cassette is
// dominated by JSON decoding.
func parseAll(msgs []*store.Message) []parsed {
	out := make([]parsed, len(msgs))
	workers := runtime.GOMAXPROCS(0)
	if len(msgs) < 1024 || workers < 2 {
		names := methods{}
		for i, m := range msgs {
			out[i] = parseFrame(m.Frame, m.Dir, names)
		}
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(msgs) + workers - 1) / workers
	for lo := 0; lo < len(msgs); lo += chunk {
		hi := min(lo+chunk, len(msgs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			names := methods{} // one per worker: no locking
			for i := lo; i < hi; i++ {
				out[i] = parseFrame(msgs[i].Frame, msgs[i].Dir, names)
			}
		}()
	}
	wg.Wait()
	return out
}

func (c *Cassette) addSession(s *store.TapeSession) {
	ps := parseAll(s.Messages)
	if len(c.byKey) == 0 && len(ps) > 1024 { // size the index once, not by doubling
		c.byKey = make(map[string][]*interaction, len(ps)/2)
		c.reqs = make([]*interaction, 0, len(ps)/2)
	}
	inflight := map[string]*interaction{}
	var open []*interaction // in flight, oldest first
	var last *interaction   // what session-level server traffic follows
	for i, m := range s.Messages {
		p := ps[i]
		if !p.ok {
			continue
		}
		switch {
		case m.Dir == store.C2S && p.hasMeth && p.id != nil:
			it := &interaction{
				sess: s.Info.ID, seq: m.Seq, src: c,
				method: p.method, canon: p.canon, key: p.key,
				token: p.token, t0: m.Time,
			}
			if m.HTTP != nil {
				it.stream = m.HTTP.StreamID
			}
			inflight[string(p.id)] = it
			open = append(open, it)
			c.reqs = append(c.reqs, it)
			c.byKey[it.key] = append(c.byKey[it.key], it)
			c.byMethod[it.method] = append(c.byMethod[it.method], it)
		case m.Dir == store.C2S && p.hasMeth:
			if p.method == "notifications/cancelled" {
				// It names a recorded id, so it never matches a live one;
				// but what the server answers after it is caused by the
				// cancellation, not by the request: a live client cancels
				// too, and then gets no answer.
				if it := inflight[string(fieldOf(p.params, "requestId"))]; it != nil {
					it.cancelled = true
				}
				continue
			}
			it := &interaction{
				sess: s.Info.ID, seq: m.Seq, src: c,
				method: p.method, canon: p.canon, key: p.key, t0: m.Time,
			}
			c.notes[it.key] = append(c.notes[it.key], it)
			last = it
		case m.Dir == store.S2C && !p.hasMeth && p.id != nil:
			it := inflight[string(p.id)]
			if it == nil {
				continue
			}
			delete(inflight, string(p.id))
			open = removeInteraction(open, it)
			if it.cancelled {
				continue // answered because it was cancelled: replayed as unanswered
			}
			it.answered = true
			it.replyAt = m.Time.Sub(it.t0)
			if len(p.err) > 0 {
				it.rpcErr = &RPCError{}
				if json.Unmarshal(p.err, it.rpcErr) != nil {
					it.rpcErr = &RPCError{Code: -32603, Message: "unreadable recorded error: " + string(p.err)}
				}
			} else {
				it.result = p.result
			}
			it.sse = m.HTTP != nil && m.HTTP.Stream == "post-sse"
			last = it
		case m.Dir == store.S2C && p.hasMeth:
			out := Outgoing{Method: p.method, Params: p.params, Request: p.id != nil}
			target := c.during(open, m, &p)
			switch {
			case target != nil:
				target.during = append(target.during, step{
					out: out, progress: p.method == "notifications/progress", at: m.Time.Sub(target.t0),
				})
			case last != nil && p.method != "notifications/progress":
				last.after = append(last.after, out)
			default:
				c.dropped++
			}
		}
	}
}

// during picks the in-flight request a server message belongs to, or nil
// when it is session-level. A 2026-07-28 subscriptions/listen request stays
// open for the whole session and carries change notifications whenever
// they happen: only its acknowledgement belongs to it; the rest is
// session-level, replayed after whatever preceded it.
func (c *Cassette) during(open []*interaction, m *store.Message, p *parsed) *interaction {
	if len(open) == 0 {
		return nil
	}
	if p.method == "notifications/progress" {
		for _, it := range open {
			if it.token != "" && it.token == p.token {
				return it
			}
		}
		return nil
	}
	ack := p.method == "notifications/subscriptions/acknowledged"
	fits := func(it *interaction) bool { return (it.method == "subscriptions/listen") == ack }
	if m.HTTP != nil {
		switch m.HTTP.Stream {
		case "post-sse":
			for _, it := range open {
				if it.stream == m.HTTP.StreamID && fits(it) {
					return it
				}
			}
			return nil
		case "get-sse":
			return nil
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		if fits(open[i]) {
			return open[i]
		}
	}
	return nil
}

func removeInteraction(s []*interaction, it *interaction) []*interaction {
	for i, x := range s {
		if x == it {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// Name implements Source.
func (c *Cassette) Name() string { return c.name }

// Len is the number of recorded requests.
func (c *Cassette) Len() int { return len(c.reqs) }

// Unused implements Source: recorded requests no session used. ping and
// server/discover are left out: the engine answers ping itself, and only
// clients of the stateless era send server/discover.
func (c *Cassette) Unused() []string {
	var out []string
	for _, it := range c.reqs {
		if it.used.Load() || it.method == "ping" || it.method == "server/discover" {
			continue
		}
		out = append(out, it.where()+" "+describe(it.method, it.canon))
	}
	return out
}

// describe shows a request in one short line.
func describe(method, canon string) string {
	if canon == "" {
		return method
	}
	const max = 160
	if len(canon) > max {
		canon = canon[:max] + "…"
	}
	return method + " " + canon
}

// Open implements Source.
func (c *Cassette) Open() SessionSource {
	return &cassetteSession{c: c, next: map[string]int{}}
}

// setMatch is how the engine hands its --match mode to cassettes.
func (c *Cassette) setMatch(m matcher) { c.match = m }

// where names the recorded request: "file s1#12".
func (it *interaction) where() string { return fmt.Sprintf("%s %s#%d", it.src.name, it.sess, it.seq) }
