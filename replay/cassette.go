package replay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"iter"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/store"
)

// A cassette source is built once, at load: every recorded request becomes
// an interaction holding its answer and the server-initiated traffic that
// belongs to it, and the interactions are indexed by method plus canonical
// params. Answering is then an index look-up, whatever the cassette's size.

// CassetteOption configures LoadCassette.
type CassetteOption func(*cassetteConfig)

type cassetteConfig struct {
	sessions []string
	ignore   []string
}

// Sessions replays only the recorded sessions with these ids or names
// (default: all of them, pooled in recorded order).
func Sessions(names ...string) CassetteOption {
	return func(c *cassetteConfig) { c.sessions = append(c.sessions, names...) }
}

// Ignore leaves request members with these names (exact, at any depth in
// params) out of matching: a live request that differs from a recorded one
// only in them matches it. For values that change from run to run
// (timestamps, request ids, nonces), as go-vcr users write a custom
// matcher for.
func Ignore(names ...string) CassetteOption {
	return func(c *cassetteConfig) { c.ignore = append(c.ignore, names...) }
}

// Cassette is a Source answering from a recording.
type Cassette struct {
	name  string
	match matcher

	// slab holds every interaction, in recorded order.
	slab     []interaction
	reqs     []*interaction // requests in recorded order
	byKey    *keyIndex      // method+canonical params → occurrences
	byMethod map[string][]*interaction
	// methodClaims counts, per method, the live requests ignore-params
	// answered from byMethod, in every session (see claimMethod).
	methodClaims map[string]*atomic.Int32
	notes        *keyIndex     // client notifications, and the traffic after them
	redacted     redactedNames // request members recorded as "[redacted]", by method
	ignore       []string      // members left out of match keys (Ignore)
	dropped      int           // server messages with nothing to attach to
	tasks        tasks         // the recorded tasks' states (tasks.go)
	// stateless names the recorded sessions of 2026-07-28, whose answers
	// go to a handshake-era client without what only that version has
	// (acrossEras); nil when there are none. A set of sessions, not a
	// flag of each interaction, which has no byte to spare.
	stateless map[string]bool
	// intro answers initialize when the cassette recorded none (see
	// handshake.go); nil when it did.
	intro *introduction
	// habits is what the recorded server did over Streamable HTTP
	// besides its messages (http_habits.go).
	habits httpHabits

	schemasOnce sync.Once
	schemas     map[string]json.RawMessage // tool name → inputSchema (InputSchema)

	// refusalsMu guards refusalsServed: the recorded refusals (a request
	// refused with a bare HTTP status) some live session has been given.
	refusalsMu     sync.Mutex
	refusalsServed map[*interaction]bool
}

// interaction is one recorded request (or client notification) and what
// the server did about it.
type interaction struct {
	// What answering reads, together at the front: two cache lines, as
	// interactions are 256 bytes in a block (see Cassette.slab).
	//
	// prep is the answer, built at load, handed out as it is when it needs
	// no Play: its Reply's NoReply (not answered), HTTPStatus (its POST
	// was refused), Result or Error, After, and SSE (the answer was an SSE
	// stream over Streamable HTTP). For a client notification, only After.
	prep  Prepared
	used  atomic.Bool
	n     uint32 // its number in Cassette.slab
	dup   uint32 // its key's list in keyIndex.dups, from 1; 0: recorded once
	plays bool   // len(during) > 0
	timed bool   // replyAt > 0
	note  bool   // a client notification
	asks  bool   // answered input_required (mrtr.go)

	replyAt time.Duration
	during  []step
	key     []byte // method, NUL, canonical params
	method  string
	sess    string // recorded session id
	seq     uint64
	stream  uint64 // HTTP stream the request travelled on
	t0      time.Time
}

// canonBytes is the canonical params, sharing the key's memory: a
// recorded 64 MiB call's are not copied to be looked into.
func (it *interaction) canonBytes() []byte { return it.key[len(it.method)+1:] }

// described is describe of the method and canonical params, with a copy of
// only what describe shows of them.
func (it *interaction) described() string {
	canon := it.canonBytes()
	return describe(it.method, string(canon[:min(len(canon), shortenedMax+1)]))
}

// step is a message the server sent while a request was in flight.
type step struct {
	out      Outgoing
	progress bool // notifications/progress: re-keyed to the live token
	at       time.Duration
	// clientTask is the id of the task the client made when it was
	// asked this (a request with params.task; clienttasks.go).
	clientTask string
}

// LoadCassette reads a cassette (.db), its JSONL export (.jsonl), or the
// MCP traffic of a HAR (.har; see store.LoadHAR).
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
	picked := store.Tape{Sessions: tape.Sessions} // the caller's tape stays whole
	if err := picked.Pick(name, cfg.sessions); err != nil {
		return nil, err
	}
	sessions := unbatched(picked.Sessions)
	seed := maphash.MakeSeed()
	// Client messages: at most one interaction each. The slab is sized
	// before anything is parsed, so that addSession can work through the
	// frames while later ones are still being parsed.
	n := 0
	for i := range sessions {
		for _, m := range sessions[i].Messages {
			if m.Dir == store.C2S {
				n++
			}
		}
	}
	c := &Cassette{
		name:     name,
		slab:     make([]interaction, n),
		byMethod: map[string][]*interaction{},
		reqs:     make([]*interaction, 0, n),
		ignore:   cfg.ignore,
	}
	b := building{reqHash: make([]uint64, 0, n), serverMethods: map[string]bool{}, byMethod: map[string]*[]*interaction{}}
	for i := range sessions {
		c.addSession(&sessions[i], parsedFrames(sessions[i].Messages, seed, cfg.ignore), &b)
	}
	c.attachListened(&b)
	c.methodClaims = make(map[string]*atomic.Int32, len(b.byMethod))
	for method, l := range b.byMethod {
		c.byMethod[method] = *l
		c.methodClaims[method] = new(atomic.Int32)
	}
	c.slab = c.slab[:b.used]
	c.byKey = buildKeyIndex(seed, c.slab, c.reqs, b.reqHash)
	c.notes = buildKeyIndex(seed, c.slab, b.notes, b.noteHash)
	c.redacted = redactedNames{}
	for _, it := range b.redacted {
		c.redacted.add(it.method, it.key[len(it.method)+1:])
	}
	clientMethods := make(map[string]bool, len(c.byMethod))
	for m := range c.byMethod {
		clientMethods[m] = true
	}
	c.intro = buildIntroduction(name, sessions, clientMethods, b.serverMethods, c.listenSubscribed())
	c.habits = habitsOf(sessions)
	return c, nil
}

// unbatched is sessions with each recorded JSON-RPC batch taken apart
// (store.Unbatched): its requests are matched one by one, as a live
// batch's are (batch.go). The caller's sessions stay as they are.
func unbatched(sessions []store.TapeSession) []store.TapeSession {
	var out []store.TapeSession
	for i := range sessions {
		orig := sessions[i].Messages
		msgs := store.Unbatched(orig)
		same := len(msgs) == len(orig) && (len(msgs) == 0 || &msgs[0] == &orig[0])
		if out == nil && same {
			continue // no batch, and none before it
		}
		if out == nil {
			out = append(make([]store.TapeSession, 0, len(sessions)), sessions[:i]...)
		}
		s := sessions[i]
		s.Messages = msgs
		out = append(out, s)
	}
	if out == nil {
		return sessions
	}
	return out
}

func (c *Cassette) httpHabits() httpHabits { return c.habits }

// HTTPHabits says, one line each, what mcpmock serving this cassette
// alone over HTTP does unlike its defaults, as the recorded server did
// (no session ids, GET or DELETE refused, …); none for a recording whose
// server did as mcpmock does by default, or not over Streamable HTTP.
func (c *Cassette) HTTPHabits() []string { return c.habits.describe() }

// building is what newCassette collects for its indexes.
type building struct {
	used     int // interactions taken from the slab
	reqHash  []uint64
	notes    []*interaction
	noteHash []uint64
	// redacted are the requests whose params hold "[redacted]", in
	// recorded order.
	redacted []*interaction
	// serverMethods are the methods the server sent, for capabilities
	// when no handshake was recorded.
	serverMethods map[string]bool
	// byMethod is Cassette.byMethod as it is built: lists that grow in
	// place, the last one at hand (most requests have the method of the
	// one before), not a map assignment a request.
	byMethod   map[string]*[]*interaction
	lastMethod *[]*interaction
	// listened are the notifications recorded on subscriptions/listen
	// streams, and clients the client each session's requests name; see
	// attachListened.
	listened []listened
	clients  map[string]string
}

// listened is a notification a recorded subscriptions/listen stream
// carried: at is when, sess the recorded session (connection) of its
// listen, and own what its session alone would have it follow (nil:
// nothing).
type listened struct {
	out  Outgoing
	at   time.Time
	sess string
	own  *interaction
}

// addMethod adds a request to its method's list.
func (b *building) addMethod(it *interaction) {
	l := b.lastMethod
	if l == nil || (*l)[0].method != it.method {
		if l = b.byMethod[it.method]; l == nil {
			l = new([]*interaction)
			b.byMethod[it.method] = l
		}
		b.lastMethod = l
	}
	*l = append(*l, it)
}

// addSession adds the interactions of s, parsed as ps, to the slab.
func (c *Cassette) addSession(s *store.TapeSession, ps iter.Seq2[int, *parsed], b *building) {
	// stateless: the session's client spoke 2026-07-28 (its requests'
	// _meta say so, since the last initialize; see Cassette.stateless).
	stateless := false
	defer func() {
		if stateless {
			if c.stateless == nil {
				c.stateless = map[string]bool{}
			}
			c.stateless[s.Info.ID] = true
		}
	}()
	newInteraction := func(m *store.Message, p *parsed) *interaction {
		it := &c.slab[b.used]
		it.n = uint32(b.used)
		b.used++
		it.sess, it.seq, it.t0 = s.Info.ID, m.Seq, m.Time
		it.method, it.key = p.method, p.key
		return it
	}
	var inflight inflightIDs
	// cancelled: the client cancelled them before any answer.
	cancelled := map[*interaction]bool{}
	tokens := map[*interaction]string{} // recorded progressTokens
	var open []*interaction             // in flight, oldest first
	var last *interaction               // what session-level server traffic follows
	// answered: the last answered request with each recorded token, for
	// progress the server sent after its answer.
	answered := map[string]*interaction{}
	// posted: client messages not in flight (notifications, requests the
	// recording marks refused), by the HTTP stream their POST opened,
	// for a refusal whose body comes after them. mcpspy keeps a refusal
	// on the message it refused, and its body as a frame of its own.
	var posted map[uint64]*interaction
	// asked: the server's task-augmented requests during a call, by id
	// (jsonrpc.CanonicalID), until the client answers (clienttasks.go).
	var asked map[string]serverAsk
	// notAsked: the server requests the fallback did not ask its client
	// and the answers mcpmock gave them, by index; neither is replayed.
	notAsked := unasked(s.Messages)
	keepPosted := func(it *interaction, meta *store.HTTPMeta) {
		if meta == nil || meta.StreamID == 0 {
			return
		}
		if posted == nil {
			posted = map[uint64]*interaction{}
		}
		posted[meta.StreamID] = it
	}
	for i, pp := range ps {
		m, p := s.Messages[i], *pp
		if m.Dir == store.S2C && m.HTTP.RefusalBody() {
			// A POST refused with a body, which is no answer to the
			// request (text, or JSON such as an error with a null id):
			// the client message on that stream is replayed so refused.
			it := openOn(open, m.HTTP.StreamID)
			if it == nil {
				it = posted[m.HTTP.StreamID]
			}
			if it != nil && !(p.ok && p.id != nil && inflight.get(p.id) == it) {
				refuseWith(it, m.HTTP, m.Frame)
				open = removeInteraction(open, it)
				delete(posted, m.HTTP.StreamID)
				continue
			}
		}
		if !p.ok {
			continue
		}
		switch {
		case m.Dir == store.C2S && p.hasMeth && p.id != nil:
			stateless = p.stateless || stateless && p.method != "initialize"
			it := newInteraction(m, &p)
			if p.token != "" {
				tokens[it] = p.token
			}
			if m.HTTP != nil {
				it.stream = m.HTTP.StreamID
			}
			inflight.put(p.id, it)
			// A POST refused with a bare status gets no answer: not open,
			// as the server traffic after it belongs elsewhere.
			if refuseWith(it, m.HTTP, nil) {
				keepPosted(it, m.HTTP)
			} else {
				it.prep.Reply.NoReply = true // until its answer comes
				open = append(open, it)
			}
			if _, ok := b.clients[s.Info.ID]; !ok && m.HTTP != nil {
				if ci := jsonrpc.Member(p.params, "_meta", "io.modelcontextprotocol/clientInfo"); ci != nil {
					if b.clients == nil {
						b.clients = map[string]string{}
					}
					b.clients[s.Info.ID] = string(ci)
				}
			}
			c.reqs = append(c.reqs, it)
			b.reqHash = append(b.reqHash, p.hash)
			if p.redacted {
				b.redacted = append(b.redacted, it)
			}
			b.addMethod(it)
		case m.Dir == store.C2S && p.hasMeth:
			if p.method == "notifications/cancelled" {
				// It names a recorded id, so it never matches a live one;
				// but what the server answers after it is caused by the
				// cancellation, not by the request: a live client cancels
				// too, and then gets no answer.
				if it := inflight.get(jsonrpc.Member(p.params, "requestId")); it != nil {
					cancelled[it] = true
				}
				continue
			}
			it := newInteraction(m, &p)
			it.note = true
			refuseWith(it, m.HTTP, nil)
			keepPosted(it, m.HTTP)
			b.notes = append(b.notes, it)
			b.noteHash = append(b.noteHash, p.hash)
			last = it
		case notAsked[i]:
			// An exchange the client never saw: no part of the conversation.
		case m.Dir == store.C2S && p.id != nil:
			if ask, ok := asked[jsonrpc.CanonicalIDString(string(p.id))]; ok {
				delete(asked, jsonrpc.CanonicalIDString(string(p.id)))
				noteClientTask(ask, p.result)
			}
		case m.Dir == store.S2C && !p.hasMeth && p.id != nil:
			it := inflight.get(p.id)
			if it == nil {
				continue
			}
			inflight.del(p.id)
			open = removeInteraction(open, it)
			if len(cancelled) > 0 && cancelled[it] {
				continue // answered because it was cancelled: replayed as unanswered
			}
			r := &it.prep.Reply
			r.NoReply, r.HTTPStatus, r.ExpireSession, r.Refusal = false, 0, false, nil
			it.replyAt = m.Time.Sub(it.t0)
			it.timed = it.replyAt > 0
			if len(p.err) > 0 {
				r.Error = &RPCError{}
				if json.Unmarshal(p.err, r.Error) != nil {
					r.Error = &RPCError{Code: -32603, Message: "unreadable recorded error: " + string(p.err)}
				}
				if it.method == "tasks/result" {
					c.tasks.noteOutcome(it) // the error the task's request met
				}
				if h := m.HTTP; h != nil && h.Stream == store.StreamJSON && h.Status >= 400 && h.Status <= 599 {
					r.HTTPStatus = int32(h.Status) // answered with that status, as it was
					if hdr := mcphttp.RefusalHeader(h.ResponseHeader, false); hdr != nil {
						r.Refusal = &HTTPRefusal{Header: hdr} // a 401's challenge, a 429's Retry-After
					}
				}
			} else {
				r.Result = p.result
				it.asks = p.asks
				c.tasks.noteAnswer(it, m.Seq, p.result)
			}
			it.prep.SSE = m.HTTP != nil && m.HTTP.Stream == store.StreamPostSSE
			last = it
			if tok := tokens[it]; tok != "" {
				answered[tok] = it
			}
		case m.Dir == store.S2C && p.hasMeth:
			b.serverMethods[p.method] = true
			if p.method == "notifications/tasks/status" {
				c.tasks.noteState(s.Info.ID, m.Seq, p.params)
			}
			out := Outgoing{Method: p.method, Params: p.params, Request: p.id != nil}
			target := c.during(open, tokens, m, &p)
			switch {
			case target != nil:
				target.during = append(target.during, step{
					out: out, progress: p.method == "notifications/progress", at: m.Time.Sub(target.t0),
				})
				target.plays = true
				if out.Request && jsonrpc.Member(p.params, "task") != nil {
					if asked == nil {
						asked = map[string]serverAsk{}
					}
					asked[jsonrpc.CanonicalIDString(string(p.id))] = serverAsk{target, len(target.during) - 1}
				}
			case !out.Request && p.method != "notifications/progress" && onListen(open, m.HTTP):
				// Sent on a listen stream: caused by whatever the client
				// did on any of its connections (attachListened).
				out.Listened = true
				b.listened = append(b.listened, listened{out: out, at: m.Time, sess: s.Info.ID, own: last})
			case p.method == "notifications/progress" && answered[p.token] != nil:
				// Sent after the answer: replayed there.
				it := answered[p.token]
				out.Progress = true
				it.prep.Reply.After = append(it.prep.Reply.After, out)
			case last != nil && p.method != "notifications/progress":
				last.prep.Reply.After = append(last.prep.Reply.After, out)
			default:
				c.dropped++
			}
		}
	}
}

// refuseWith makes it replay the refusal meta records, if it records
// one (HTTPMeta.Refusal): its status, or, for a session the server no
// longer knew, its expiry; with the headers a client acts on, and body
// (nil: none was recorded). It says whether it did.
func refuseWith(it *interaction, meta *store.HTTPMeta, body []byte) bool {
	status, gone := meta.Refusal()
	if status == 0 {
		return false
	}
	refusal := RefusalReply(status, gone, meta.ResponseHeader, body)
	r := &it.prep.Reply // what follows it (After) stays
	r.NoReply, r.HTTPStatus, r.ExpireSession, r.Refusal = false, refusal.HTTPStatus, refusal.ExpireSession, refusal.Refusal
	return true
}

// onListen says whether a server message with meta travelled on the
// stream of a subscriptions/listen request in flight.
func onListen(open []*interaction, meta *store.HTTPMeta) bool {
	if meta == nil || meta.Stream != store.StreamPostSSE {
		return false
	}
	it := openOn(open, meta.StreamID)
	return it != nil && it.method == "subscriptions/listen"
}

// attachListened places the notifications recorded on listen streams.
// A 2026-07-28 client over HTTP has no session, and mcpspy records each
// of its connections as a session of its own: a listen stream's session
// holds the listen alone, or calls that did not cause what it carried.
// So a notification follows the request, of any session of the same
// client (the same clientInfo, or none), that was in flight when it was
// sent (the latest to start, if several), else the one answered last
// before it: the call that changed what it tells of, as over stdio.
// Without one it follows what its own session had before it.
func (c *Cassette) attachListened(b *building) {
	if len(b.listened) == 0 {
		return
	}
	slices.SortStableFunc(b.listened, func(x, y listened) int { return x.at.Compare(y.at) })
	byClient := map[string][]*interaction{}
	for _, it := range c.reqs {
		if it.method == "subscriptions/listen" || it.prep.Reply.NoReply || it.prep.Reply.HTTPStatus != 0 {
			continue
		}
		client := b.clients[it.sess]
		byClient[client] = append(byClient[client], it)
	}
	for _, l := range b.listened {
		var inFlight, before *interaction
		var beforeAt time.Time
		for _, it := range byClient[b.clients[l.sess]] {
			end := it.t0.Add(it.replyAt)
			switch {
			case it.t0.After(l.at):
			case end.After(l.at):
				if inFlight == nil || it.t0.After(inFlight.t0) {
					inFlight = it
				}
			case before == nil || !end.Before(beforeAt):
				before, beforeAt = it, end
			}
		}
		target := cmp.Or(inFlight, before, l.own)
		if target == nil {
			c.dropped++
			continue
		}
		target.prep.Reply.After = append(target.prep.Reply.After, l.out)
	}
}

// listenSubscribed says whether a recorded subscriptions/listen asked
// for updates of a resource: the recorded server took subscriptions.
func (c *Cassette) listenSubscribed() bool {
	for _, it := range c.byMethod["subscriptions/listen"] {
		if f := filterOf(it.key[len(it.method)+1:]); f != nil && len(f.ResourceSubscriptions) > 0 {
			return true
		}
	}
	return false
}

// openOn is the request in flight that travelled on HTTP stream id.
func openOn(open []*interaction, id uint64) *interaction {
	for _, it := range open {
		if it.stream == id && id != 0 {
			return it
		}
	}
	return nil
}

// inflightIDs finds the requests in flight by their ids' values
// (jsonrpc.CanonicalID: an answer or a cancel may write an id another way
// than its request did, "\u0031" for "1", 3e0 for 3), as a map from
// string(id) would. A session seldom has more than a few in
// flight: a short list, searched, costs less than a map, whose keys must
// be copied (that was most of adding a request). Past a few, a map it is.
type inflightIDs struct {
	ids [][]byte
	its []*interaction
	m   map[string]*interaction
}

// inflightList is how many requests in flight the list holds.
const inflightList = 16

func (f *inflightIDs) get(id []byte) *interaction {
	id = jsonrpc.CanonicalID(id)
	if f.m != nil {
		return f.m[string(id)]
	}
	for k := range f.ids {
		if string(f.ids[k]) == string(id) {
			return f.its[k]
		}
	}
	return nil
}

func (f *inflightIDs) put(id []byte, it *interaction) {
	id = jsonrpc.CanonicalID(id)
	if f.m != nil {
		f.m[string(id)] = it
		return
	}
	for k := range f.ids {
		if string(f.ids[k]) == string(id) {
			f.its[k] = it
			return
		}
	}
	if len(f.ids) == inflightList {
		f.m = make(map[string]*interaction, 2*inflightList)
		for k := range f.ids {
			f.m[string(f.ids[k])] = f.its[k]
		}
		f.ids, f.its = nil, nil
		f.m[string(id)] = it
		return
	}
	f.ids, f.its = append(f.ids, id), append(f.its, it)
}

func (f *inflightIDs) del(id []byte) {
	id = jsonrpc.CanonicalID(id)
	if f.m != nil {
		delete(f.m, string(id))
		return
	}
	for k := range f.ids {
		if string(f.ids[k]) == string(id) {
			last := len(f.ids) - 1
			f.ids[k], f.its[k] = f.ids[last], f.its[last]
			f.ids, f.its = f.ids[:last], f.its[:last]
			return
		}
	}
}

// during picks the in-flight request a server message belongs to, or nil
// when it is session-level. A 2026-07-28 subscriptions/listen request stays
// open for the whole session and carries change notifications whenever
// they happen: only its acknowledgement belongs to it; the rest is
// session-level, replayed after whatever preceded it.
func (c *Cassette) during(open []*interaction, tokens map[*interaction]string, m *store.Message, p *parsed) *interaction {
	if len(open) == 0 {
		return nil
	}
	if p.method == "notifications/progress" {
		for _, it := range open {
			if tok := tokens[it]; tok != "" && tok == p.token {
				return it
			}
		}
		return nil
	}
	ack := p.method == "notifications/subscriptions/acknowledged"
	fits := func(it *interaction) bool { return (it.method == "subscriptions/listen") == ack }
	if m.HTTP != nil {
		switch m.HTTP.Stream {
		case store.StreamPostSSE:
			for _, it := range open {
				if it.stream == m.HTTP.StreamID && fits(it) {
					return it
				}
			}
			return nil
		case store.StreamGetSSE:
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

// claimMethod is keyIndex.claim for ignore-params: the live requests of
// a method, in every session, use up the recorded ones in recorded order.
func (c *Cassette) claimMethod(method string, all []*interaction) *interaction {
	return claimNext(c.methodClaims[method], all)
}

// Unused implements Source: recorded requests no session used. ping and
// server/discover are left out: the engine answers ping itself, and a
// client of the stateless era need not discover (it may version each
// request). So is every initialize once one was used: each recorded
// session opens with one (the sessions mcpmock's fallback adds too), and
// a client that replays them all in one session has missed none.
func (c *Cassette) Unused() []string {
	unused, _ := c.unusedIn(0)
	return unused
}

// resetUsage makes every recorded request unused again, for
// Server.ResetReport: the marks and the claims that count live requests
// against recorded ones start from nothing.
func (c *Cassette) resetUsage() {
	for _, it := range c.reqs {
		it.used.Store(false)
	}
	for i := range c.byKey.claims {
		c.byKey.claims[i].Store(0)
	}
	for _, n := range c.methodClaims {
		n.Store(0)
	}
}

// unusedIn is Unused, knowing the eras the live sessions spoke: what
// only a client of another era sends is left out, and returned apart,
// saying why (eras.go).
func (c *Cassette) unusedIn(live eras) (unused []string, leftOut []LeftOut) {
	initialized := false
	for _, it := range c.byMethod["initialize"] {
		initialized = initialized || it.used.Load()
	}
	for _, it := range c.reqs {
		if it.used.Load() || it.method == "ping" || (initialized && it.method == "initialize") {
			continue
		}
		what := c.where(it) + " " + it.described()
		if why := otherEra(it.method, it.canonBytes(), live); why != "" {
			leftOut = append(leftOut, LeftOut{Request: what, Why: why})
			continue
		}
		if it.method != "server/discover" {
			unused = append(unused, what)
		}
	}
	return unused, leftOut
}

// describe shows a request in one short line.
func describe(method, canon string) string {
	if canon == "" {
		return method
	}
	return method + " " + shortened(canon)
}

// shortenedMax is how much of canonical params messages and reports show.
const shortenedMax = 160

// shortened cuts canonical params for messages and reports.
func shortened(canon string) string {
	if len(canon) > shortenedMax {
		return canon[:shortenedMax] + "…"
	}
	return canon
}

// shortCanon is shortened canonical params (canonParams), without a copy
// of all of a big request's.
func shortCanon(method string, params json.RawMessage) string {
	canon, _ := appendCanonParams(make([]byte, 0, len(params)), method, params)
	return shortened(string(canon[:min(len(canon), shortenedMax+1)]))
}

// Open implements Source.
func (c *Cassette) Open() SessionSource {
	return &cassetteSession{c: c}
}

// setMatch is how the engine hands its --match mode to cassettes.
func (c *Cassette) setMatch(m matcher) { c.match = m }

// where names the recorded request: "file s1#12".
func (c *Cassette) where(it *interaction) string {
	return fmt.Sprintf("%s %s#%d", c.name, it.sess, it.seq)
}
