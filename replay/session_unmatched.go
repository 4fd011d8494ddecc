package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// What a session answers when no source took a request: the lifecycle
// a recording without one lacks (initialize, logging/setLevel,
// resources/subscribe and unsubscribe), or an
// error that names the nearest recorded request.

// unmatched answers a request no source took.
func (s *session) unmatched(ctx context.Context, req *Request, ex exchange) {
	defer ex.done()
	if req.Method == "initialize" && (s.introduce(req, ex, false) || s.handshakeLive(ctx, req, ex) || s.introduce(req, ex, true)) {
		return
	}
	if req.Method == "server/discover" {
		// With nothing recorded, a live server (package fallback) says
		// which era it speaks. Else the recording is of the handshake
		// era: 2026-07-28 clients fall back to initialize, as they did
		// when it was made.
		if s.nothingRecorded() && s.handshakeLive(ctx, req, ex) {
			return
		}
		_ = ex.reply(errorMessage(req.ID, &RPCError{Code: -32601, Message: "Method not found: server/discover"}), false)
		return
	}
	if req.Method == "logging/setLevel" && s.answerSetLevel(req, ex) {
		return
	}
	if (req.Method == "resources/subscribe" || req.Method == "resources/unsubscribe") && s.answerSubscribe(req, ex) {
		return
	}
	u := Unmatched{Method: req.Method, Params: shortCanon(req.Method, req.Params)}
	for _, src := range s.srcs {
		if n, ok := src.(Nearer); ok {
			if near, diff, ok := n.Nearest(req); ok {
				u.Nearest, u.Diff = near, diff
				break
			}
		}
	}
	s.srv.addUnmatched(u)
	var e *RPCError
	if u.Nearest == "" {
		e = &RPCError{Code: -32601, Message: fmt.Sprintf("Method not found: %s (mcpmock: nothing recorded or scripted answers it)", req.Method)}
		s.srv.warnf("unmatched %s: no source knows this method", describe(req.Method, u.Params))
	} else {
		data, _ := json.Marshal(u)
		e = &RPCError{Code: -32602, Data: data, Message: fmt.Sprintf("mcpmock: no recorded answer for %s; nearest recorded request: %s\n%s", req.Method, u.Nearest, u.Diff)}
		s.srv.warnf("unmatched %s\n  nearest: %s\n  %s", describe(req.Method, u.Params), u.Nearest, indent(u.Diff))
	}
	_ = ex.reply(errorMessage(req.ID, e), false)
}

// answerSetLevel answers a logging/setLevel nothing recorded, when the
// server the client was introduced to declared logging: such a server
// answers it with an empty result, and some clients send it whatever they
// go on to do (the MCP Inspector's CLI sets "debug" as soon as it has
// connected, and gives up on an error), so a cassette recorded with
// another client could not be replayed to them. Recorded log messages
// are not made up: only a recorded setLevel brings those. A level the
// spec does not name gets -32602, as from a real server. Only after an
// initialize: 2026-07-28 deprecates logging (SEP-2577), and a client of
// that era declares nothing to set a level for.
func (s *session) answerSetLevel(req *Request, ex exchange) bool {
	s.mu.Lock()
	logging := s.logging
	s.mu.Unlock()
	if !logging {
		return false
	}
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(req.Params, &p) != nil || !slices.Contains(jsonrpc.LogLevels, p.Level) {
		_ = ex.reply(errorMessage(req.ID, &RPCError{Code: -32602, Message: fmt.Sprintf("logging/setLevel: level must be one of %s", strings.Join(jsonrpc.LogLevels, ", "))}), false)
		s.srv.countMatched()
		return true
	}
	if !s.srv.setLevelWarned.Swap(true) {
		s.srv.warnf("nothing recorded answers logging/setLevel; answering {} (the recorded server declared logging), and again for the rest of this run")
	}
	s.srv.countMatched()
	_ = ex.reply(resultMessage(req.ID, nil), false)
	return true
}

// answerSubscribe answers a resources/subscribe or unsubscribe nothing
// recorded, when the server the client was introduced to declared
// resources.subscribe: such a server answers it with an empty result. A
// 2026-07-28 recording has none (its client subscribed by a listen), yet
// shows a server that took subscriptions; replayed to a handshake-era
// client, whose way to subscribe this is, the resources/updated it
// carried reach the client only while it is subscribed (unsubscribed).
// A request without a URI gets -32602, as from a real server.
func (s *session) answerSubscribe(req *Request, ex exchange) bool {
	s.mu.Lock()
	subscribes := s.subscribes
	s.mu.Unlock()
	if !subscribes {
		return false
	}
	s.srv.countMatched()
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.URI == "" {
		_ = ex.reply(errorMessage(req.ID, &RPCError{Code: -32602, Message: req.Method + ": uri must be a non-empty string"}), false)
		return true
	}
	if !s.srv.subscribeWarned.Swap(true) {
		s.srv.warnf("nothing recorded answers %s; answering {} (the recorded server declared resources.subscribe), and again for the rest of this run", req.Method)
	}
	s.noteSubscription(req)
	_ = ex.reply(resultMessage(req.ID, nil), false)
	return true
}

// noteSubscription keeps what req, answered with a result, subscribed to
// or unsubscribed from.
func (s *session) noteSubscription(req *Request) {
	sub := req.Method == "resources/subscribe"
	if !sub && req.Method != "resources/unsubscribe" {
		return
	}
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.URI == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sub {
		delete(s.subscribed, p.URI)
		return
	}
	if s.subscribed == nil {
		s.subscribed = map[string]bool{}
	}
	s.subscribed[p.URI] = true
}

// unsubscribed says whether o, sent after req, is a resources/updated a
// listen stream carried (Outgoing.Listened) that a handshake-era client
// did not subscribe to: a server sends it only what it subscribed to.
// 2026-07-28 clients get theirs by their listens' filters (listen.go).
func (s *session) unsubscribed(o Outgoing, req *Request) bool {
	if !o.Listened || o.Method != "notifications/resources/updated" {
		return false
	}
	if v := s.versionOf(req); v == "" || v >= statelessVersion {
		return false
	}
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(o.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.subscribed[p.URI]
}

// introduce answers initialize from a source that recorded none (a
// cassette whose handshake was cut out), as the recorded server would have
// introduced itself.
func (s *session) introduce(req *Request, ex exchange, blankToo bool) bool {
	for _, src := range s.srcs {
		h, ok := src.(Handshaker)
		if !ok {
			continue
		}
		if b, ok := src.(interface{ blankIntroduction() bool }); ok && b.blankIntroduction() && !blankToo {
			continue
		}
		result, warning, ok := h.Handshake(req)
		if !ok {
			continue
		}
		if warning != "" {
			s.srv.warnf("%s", warning)
		}
		s.srv.countMatched()
		s.initialized(req, result)
		_ = ex.reply(resultMessage(req.ID, result), false)
		return true
	}
	return false
}

// nothingRecorded says whether no source has a recorded lifecycle to keep:
// every cassette is blank (about to be recorded from scratch), or there is
// none.
func (s *session) nothingRecorded() bool {
	for _, src := range s.srcs {
		if b, ok := src.(interface{ blankIntroduction() bool }); ok && !b.blankIntroduction() {
			return false
		}
	}
	return true
}

// handshakeLive lets a live server answer initialize or server/discover
// (package fallback) when no recording has anything to say about the
// handshake.
func (s *session) handshakeLive(ctx context.Context, req *Request, ex exchange) bool {
	for _, src := range s.srcs {
		if l, ok := src.(LiveHandshaker); ok {
			if r, ok := l.LiveHandshake(ctx, &peer{s: s, ex: ex, req: req}, req); ok {
				s.finish(ctx, req, ex, r, false, "")
				return true
			}
		}
	}
	return false
}

func indent(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte("\n  ")))
}

// whyMax bounds Unmatched.Why: a script's reply quotes the arguments,
// which may be most of a 64 MiB call.
const whyMax = 2 * shortenedMax

// answeredUnmatched counts a request a source answered with a reply that
// says it had no answer (Reply.Unmatched), and warns as for one no source
// took; told is what the source said of why, if anything (Explainer).
func (s *Server) answeredUnmatched(req *Request, r Reply, told string) {
	u := Unmatched{Method: req.Method, Params: shortCanon(req.Method, req.Params), Why: unmatchedWhy(r, told)}
	s.addUnmatched(u)
	s.warnf("unmatched %s\n  %s", describe(u.Method, u.Params), u.Why)
}

// unmatchedWhy is why r's source had no answer: what the source told
// (Explainer), else what r says, its error's Why or else its message, or
// its result's first text content (a tool's isError result); cut to
// whyMax bytes.
func unmatchedWhy(r Reply, told string) string {
	why := told
	switch {
	case why != "":
	case r.Error != nil && r.Error.Why != "":
		why = r.Error.Why
	case r.Error != nil:
		why = r.Error.Message
	default:
		jsonrpc.Elements(jsonrpc.Member(r.Result, "content"), func(block []byte) {
			if why != "" {
				return
			}
			if t, _ := jsonrpc.String(jsonrpc.Member(block, "type")); t == "text" {
				why, _ = jsonrpc.String(jsonrpc.Member(block, "text"))
			}
		})
	}
	switch {
	case why == "" && jsonrpc.Member(r.Result, "task") != nil:
		// A CreateTaskResult: the reply that says so is the task's.
		return "the source had no answer for it: the task it created ends with its reply saying so (tasks/result)"
	case why == "":
		return "the source had no answer for it"
	}
	if len(why) > whyMax {
		why = strings.ToValidUTF8(why[:whyMax], "") + "…"
	}
	return why
}
