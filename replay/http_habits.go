package replay

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/store"
)

// What a recorded server did over Streamable HTTP besides its messages,
// which mcpmock does alike, so that a host replaying the recording meets
// the server it met live (docs/REPLAY.md, Transports):
//
//   - A server without sessions (go-sdk's Stateless handler, the
//     TypeScript SDK's transport without a session id generator) answers
//     initialize with no Mcp-Session-Id, and a client then sends none.
//     mcpmock issues none either; it groups such a client's requests by
//     connection, as mcpspy recorded them, and answers GET and DELETE
//     with 405, as go-sdk's stateless server does. The TypeScript SDK's
//     instead answers GET with an event stream that stays open and
//     carries nothing; when the recordings show only that, so does
//     mcpmock.
//   - The spec lets a server with sessions refuse GET with 405 (it offers
//     no stream of its own) and DELETE with 405 (clients may not end
//     sessions). mcpmock refuses them so when every one recorded in a
//     session with an id was.
//   - The spec asks for Mcp-Session-Id on the answer to initialize only;
//     the TypeScript SDK's server and go-sdk's repeat it on every answer,
//     mcp-go's does not. mcpmock repeats it unless no recorded answer
//     after initialize did.
//   - A 2025-11-25 server should begin each event stream with a priming
//     event (an id, no data) so that a client cut off before the first
//     message can resume; servers without an event store (mcp-go's, the
//     TypeScript SDK's without one) send none. mcpmock primes unless no
//     recorded stream of 2025-11-25 was primed.
//
// Only the handshake era counts: in 2026-07-28 nothing has sessions and
// GET and DELETE always get 405.

// errNoStream: a server without sessions has no stream for what it sends
// outside a request's answer.
var errNoStream = errors.New("a server without sessions has no GET stream")

// httpHabits counts what the recordings show. Counts, not verdicts, so
// that layered sources add up: one recording with sessions outweighs any
// number without.
type httpHabits struct {
	withSession, withoutSession int   // initialize answers with and without Mcp-Session-Id
	get, del                    tally // GETs given a stream or refused; DELETEs that ended a session or refused
	// GETs without a session id to a server without sessions, given an
	// (empty) stream or refused.
	quietGet tally

	// Answers after initialize in a session with an id that repeated the
	// Mcp-Session-Id, and that did not.
	echoed, notEchoed int
	// Event streams of 2025-11-25 sessions that began with a priming
	// event, and that did not.
	primed, unprimed int

	// saidBy says who decides whether there are sessions, over what the
	// recordings show ("": nobody): Options.HTTPSessions, or the first
	// source whose HTTPSessionPolicy says; saidSessions is what.
	saidBy       string
	saidSessions bool
}

// RecordedWithoutSessions says whether the Streamable HTTP sessions
// among sessions show a server without sessions, which mcpmock serves
// so (for export --script, which writes it as server.sessions: false).
func RecordedWithoutSessions(sessions []store.TapeSession) bool {
	return habitsOf(sessions).sessionless()
}

// habitsNow is what the recordings show, with what the options or a
// source say of sessions over it.
func (s *Server) habitsNow() httpHabits {
	h := s.habits
	if o := s.opts.HTTPSessions; o == "on" || o == "off" {
		h.saidBy, h.saidSessions = "asked (HTTP sessions: "+o+")", o == "on"
		return h
	}
	for _, src := range s.sources {
		if p, ok := src.(HTTPSessionPolicy); ok {
			if issue, said := p.HTTPSessions(); said {
				h.saidBy, h.saidSessions = src.Name()+" says (server.sessions)", issue
				break
			}
		}
	}
	return h
}

func (h *httpHabits) add(o httpHabits) {
	h.withSession += o.withSession
	h.withoutSession += o.withoutSession
	h.get.add(o.get)
	h.del.add(o.del)
	h.quietGet.add(o.quietGet)
	h.echoed += o.echoed
	h.notEchoed += o.notEchoed
	h.primed += o.primed
	h.unprimed += o.unprimed
}

// habitsOf reads the habits of the Streamable HTTP sessions among
// sessions.
func habitsOf(sessions []store.TapeSession) httpHabits {
	var h httpHabits
	for i := range sessions {
		s := &sessions[i]
		if s.Info.Transport != store.TransportHTTP {
			continue
		}
		if hs := s.Info.Handshake; hs.Method == "initialize" && len(hs.ServerInfo) > 0 {
			if s.Info.HTTPSessionID != "" {
				h.withSession++
			} else {
				h.withoutSession++
			}
		}
		if s.Info.HTTPSessionID == "" {
			// A server without sessions refuses GET and DELETE for
			// having none, or keeps GET open with nothing on it: no
			// habit of a server with them (which --http-sessions on
			// makes it).
			for _, b := range s.Info.Bare {
				if b.HTTP.Method == http.MethodGet {
					h.quietGet.count(&b.HTTP)
				}
			}
			continue
		}
		streamed := false
		for _, m := range s.Messages {
			switch {
			case m.HTTP == nil:
			case m.HTTP.Stream == store.StreamGetSSE && !streamed:
				streamed = true
				h.get.served++
			case m.Dir == store.S2C && m.HTTP.Stream == store.StreamJSON:
				h.addBare(m.HTTP) // a refusal's body, kept as a frame
			}
		}
		for _, p := range s.Info.Priming {
			if p.Stream == store.StreamGetSSE {
				h.get.served++
			}
		}
		for _, b := range s.Info.Bare {
			h.addBare(&b.HTTP)
		}
		h.addAnswerHabits(s)
	}
	return h
}

// addAnswerHabits counts, in a Streamable HTTP session with an id, the
// answers after initialize that repeated the session id and that did
// not, and (for 2025-11-25) the event streams primed and not.
func (h *httpHabits) addAnswerHabits(s *store.TapeSession) {
	type stream struct {
		kind string
		id   uint64
	}
	seen := map[stream]bool{}
	priming := primes(s.Info.Handshake.ProtocolVersion)
	answer := func(m *store.HTTPMeta) {
		if http.Header(m.RequestHeader).Get("Mcp-Session-Id") == "" || m.Status/100 != 2 || len(m.ResponseHeader) == 0 {
			return // initialize's, a refusal, or one whose headers were not kept
		}
		if http.Header(m.ResponseHeader).Get("Mcp-Session-Id") != "" {
			h.echoed++
		} else {
			h.notEchoed++
		}
	}
	for _, m := range s.Messages {
		switch {
		case m.HTTP == nil:
		case m.HTTP.Stream == store.StreamPostSSE || m.HTTP.Stream == store.StreamGetSSE:
			st := stream{m.HTTP.Stream, m.HTTP.StreamID}
			if seen[st] {
				continue
			}
			seen[st] = true
			answer(m.HTTP)
			switch {
			case !priming || m.HTTP.Method == http.MethodGet && http.Header(m.HTTP.RequestHeader).Get("Last-Event-ID") != "":
				// a resumed stream need not prime again
			case len(m.HTTP.Priming) > 0:
				h.primed++
			default:
				h.unprimed++
			}
		case m.HTTP.Stream == store.StreamJSON, m.Dir == store.C2S && m.HTTP.Status != 0:
			answer(m.HTTP) // a JSON answer, or a 202 to a notification
		}
	}
	for _, p := range s.Info.Priming {
		if priming && (p.Stream == store.StreamPostSSE || p.Stream == store.StreamGetSSE) {
			h.primed++
		}
	}
	for _, b := range s.Info.Bare {
		if priming && b.HTTP.Method == http.MethodGet && b.HTTP.Status == http.StatusOK {
			h.unprimed++ // a GET stream that ended with nothing, not even a priming event
		}
	}
}

// echoesSessionID says whether answers after initialize repeat the
// Mcp-Session-Id: unless the recordings show only answers that did not.
func (h httpHabits) echoesSessionID() bool { return h.echoed > 0 || h.notEchoed == 0 }

// primesStreams says whether a 2025-11-25 event stream begins with a
// priming event: unless the recordings show only streams that did not.
func (h httpHabits) primesStreams() bool { return h.primed > 0 || h.unprimed == 0 }

// addBare counts a GET or DELETE whose answer carried no message (none,
// or a refusal's body).
func (h *httpHabits) addBare(m *store.HTTPMeta) {
	switch m.Method {
	case http.MethodGet:
		h.get.count(m)
	case http.MethodDelete:
		h.del.count(m)
	}
}

// tally counts the GETs or DELETEs of the handshake era (2026-07-28 has
// neither, whatever the server) that a server served, and that it
// refused with 405.
type tally struct{ served, refused int }

// count counts the request of m by the status of its answer.
func (t *tally) count(m *store.HTTPMeta) {
	if http.Header(m.RequestHeader).Get("Mcp-Protocol-Version") >= statelessVersion {
		return
	}
	switch {
	case m.Status/100 == 2:
		t.served++
	case m.Status == http.StatusMethodNotAllowed:
		t.refused++
	}
}

func (t *tally) add(o tally) { t.served, t.refused = t.served+o.served, t.refused+o.refused }

// onlyRefused says whether some were counted, and every one refused.
func (t tally) onlyRefused() bool { return t.refused > 0 && t.served == 0 }

// onlyServed says whether some were counted, and every one served.
func (t tally) onlyServed() bool { return t.served > 0 && t.refused == 0 }

// sessionless: issue no Mcp-Session-Id.
func (h httpHabits) sessionless() bool {
	if h.saidBy != "" {
		return !h.saidSessions
	}
	return h.withoutSession > 0 && h.withSession == 0
}

// refuses says whether a GET or DELETE of the handshake era gets 405.
func (h httpHabits) refuses(method string) bool {
	switch method {
	case http.MethodGet:
		if h.sessionless() {
			return !h.keepsQuietGetOpen()
		}
		return h.get.onlyRefused()
	case http.MethodDelete:
		return h.sessionless() || h.del.onlyRefused()
	}
	return false
}

// keepsQuietGetOpen says whether a server without sessions answers a GET
// with an event stream that carries nothing until the client leaves, as
// every such GET recorded was answered. Only when the recordings decide
// that the server has no sessions: what a flag or a script says of
// sessions says GET gets 405.
func (h httpHabits) keepsQuietGetOpen() bool {
	return h.saidBy == "" && h.sessionless() && h.quietGet.onlyServed()
}

// allow is the Allow header of a 405 to a handshake-era request.
func (h httpHabits) allow() string {
	methods := []string{http.MethodGet, http.MethodPost, http.MethodDelete}
	kept := methods[:0]
	for _, m := range methods {
		if !h.refuses(m) {
			kept = append(kept, m)
		}
	}
	return strings.Join(kept, ", ")
}

// describe says what mcpmock does differently from its defaults, for
// stderr when an HTTP listener starts; nothing when it does nothing so.
func (h httpHabits) describe() []string {
	if h.sessionless() {
		why := "the recorded server answered initialize without an Mcp-Session-Id"
		if h.saidBy != "" {
			why = h.saidBy
		}
		refused := "GET and DELETE get 405"
		if h.keepsQuietGetOpen() {
			refused = "GET gets an event stream that carries nothing, as the recorded server's did, and DELETE gets 405"
		}
		return []string{"Streamable HTTP without sessions, as " + why + ": none is issued, requests are grouped by connection, and " + refused}
	}
	var lines []string
	if !h.echoesSessionID() {
		lines = append(lines, "answers after initialize carry no Mcp-Session-Id, as the recorded server's did not")
	}
	if !h.primesStreams() {
		lines = append(lines, "event streams begin without a priming event, as the recorded server's did")
	}
	if h.refuses(http.MethodGet) {
		lines = append(lines, "GET gets 405, as the recorded server refused every GET (it offered no stream of its own)")
	}
	if h.refuses(http.MethodDelete) {
		lines = append(lines, "DELETE gets 405, as the recorded server refused every DELETE (clients could not end their sessions)")
	}
	return lines
}
