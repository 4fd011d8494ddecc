package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcptape/mcptape/store"
)

// A cassette cut from a longer recording (mcpspy export --filter, a
// hand-trimmed bug report) may have lost its initialize exchange. A
// handshake-era client could then not get past connecting, although every
// call it goes on to make is on tape. So when nothing answers initialize
// and a cassette recorded none, the cassette introduces itself from what
// its sessions' info kept: the negotiated version, serverInfo, the
// server's capabilities and instructions. Recordings older than the capabilities field, or
// made in the stateless era, get capabilities inferred from the methods on
// tape.

// Handshaker is implemented by session sources that can answer initialize
// without a recorded initialize exchange.
type Handshaker interface {
	// Handshake returns an initialize result and, the first time, a line
	// for stderr saying where it came from; ok=false when it cannot.
	Handshake(req *Request) (result json.RawMessage, warning string, ok bool)
}

// handshakeVersions are the protocol versions initialize can negotiate,
// newest first.
var handshakeVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// introduction is how a cassette without a recorded initialize answers one.
type introduction struct {
	version      string          // as recorded; "" when none was (pick from the request)
	serverInfo   json.RawMessage // as recorded, or naming mcpmock and the cassette
	capabilities json.RawMessage
	instructions json.RawMessage // a JSON string, nil when none was recorded
	sources      string          // what the answer is made of, for the warning
	// blank says the cassette holds nothing to introduce itself with: no
	// handshake in its sessions' info and no message on tape (a cassette
	// about to be filled by a fallback server). A live server's own
	// handshake is then better than one made up.
	blank  bool
	warned atomic.Bool
}

// buildIntroduction collects what the sessions' info kept about the
// handshake. clientMethods and serverMethods are the methods on tape in
// each direction, for capabilities no info kept; listenSubscribed says a
// recorded subscriptions/listen named resources (resourceSubscriptions).
// It returns nil when the cassette recorded an initialize exchange: that
// is answered as recorded.
func buildIntroduction(name string, sessions []store.TapeSession, clientMethods, serverMethods map[string]bool, listenSubscribed bool) *introduction {
	if clientMethods["initialize"] {
		return nil
	}
	in := &introduction{}
	strippedExtensions := false
	in.blank = len(clientMethods) == 0 && len(serverMethods) == 0
	var from []string
	for i := range sessions {
		h := sessions[i].Info.Handshake
		if h.Method != "" || len(h.ServerInfo) > 0 || len(h.Capabilities) > 0 {
			in.blank = false
		}
		if in.version == "" && h.Method == "initialize" && slices.Contains(handshakeVersions, h.ProtocolVersion) {
			in.version = h.ProtocolVersion
		}
		if in.serverInfo == nil && len(h.ServerInfo) > 0 && json.Valid(h.ServerInfo) {
			in.serverInfo = h.ServerInfo
		}
		if in.capabilities == nil && len(h.Capabilities) > 0 && json.Valid(h.Capabilities) {
			in.capabilities = h.Capabilities
			if h.Method == "server/discover" || h.ProtocolVersion >= statelessVersion {
				// Recorded in 2026-07-28, answered to a client of the
				// handshake era (no other asks initialize).
				in.capabilities = handshakeCapabilities(h.Capabilities)
				strippedExtensions = len(in.capabilities) < len(h.Capabilities)
			}
		}
		if in.instructions == nil && h.Instructions != "" {
			in.instructions, _ = json.Marshal(h.Instructions)
		}
	}
	if in.version != "" {
		from = append(from, "version "+in.version+" as recorded")
	} else {
		from = append(from, "the version the client asks for")
	}
	if in.serverInfo != nil {
		from = append(from, "serverInfo as recorded")
	} else {
		in.serverInfo, _ = json.Marshal(map[string]string{"name": "mcpmock", "version": name})
		from = append(from, "serverInfo naming mcpmock")
	}
	switch {
	case strippedExtensions:
		from = append(from, "capabilities as recorded without 2026-07-28's extensions")
	case in.capabilities != nil:
		from = append(from, "capabilities as recorded")
	default:
		caps := inferCapabilities(clientMethods, serverMethods, listenSubscribed)
		in.capabilities, _ = json.Marshal(caps)
		names := make([]string, 0, len(caps))
		for k := range caps {
			names = append(names, k)
		}
		slices.Sort(names)
		if len(names) == 0 {
			names = []string{"none"}
		}
		from = append(from, "capabilities inferred from the methods on tape ("+strings.Join(names, ", ")+")")
	}
	if in.instructions != nil {
		from = append(from, "instructions as recorded")
	}
	in.sources = strings.Join(from, ", ")
	return in
}

// inferCapabilities declares what the recorded traffic shows the server
// did: a family of requests it answered, or a notification it sent; and
// subscriptions to resources, when a recorded listen asked for them
// (listenSubscribed), as 2026-07-28 clients subscribe.
func inferCapabilities(client, server map[string]bool, listenSubscribed bool) map[string]any {
	has := func(methods map[string]bool, prefix string) bool {
		for m := range methods {
			if strings.HasPrefix(m, prefix) {
				return true
			}
		}
		return false
	}
	caps := map[string]any{}
	subscribe := client["resources/subscribe"] || server["notifications/resources/updated"] || listenSubscribed
	family := func(name string) {
		if !has(client, name+"/") && !server["notifications/"+name+"/list_changed"] && (name != "resources" || !subscribe) {
			return
		}
		c := map[string]any{}
		if server["notifications/"+name+"/list_changed"] {
			c["listChanged"] = true
		}
		if name == "resources" && subscribe {
			c["subscribe"] = true
		}
		caps[name] = c
	}
	family("tools")
	family("resources")
	family("prompts")
	if client["logging/setLevel"] || server["notifications/message"] {
		caps["logging"] = map[string]any{}
	}
	if client["completion/complete"] {
		caps["completions"] = map[string]any{}
	}
	return caps
}

// answer builds the initialize result for req.
func (in *introduction) answer(name string, req *Request) (json.RawMessage, string) {
	version := in.version
	if version == "" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		version = handshakeVersions[0] // a server answers its latest when it cannot echo
		if slices.Contains(handshakeVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
	}
	v, _ := json.Marshal(version)
	result := fmt.Appendf(nil, `{"protocolVersion":%s,"capabilities":%s,"serverInfo":%s`, v, in.capabilities, in.serverInfo)
	if in.instructions != nil {
		result = fmt.Appendf(result, `,"instructions":%s`, in.instructions)
	}
	result = append(result, '}')
	var warning string
	if !in.warned.Swap(true) {
		warning = fmt.Sprintf("%s recorded no initialize exchange; answering initialize from its session info: %s", name, in.sources)
	}
	return result, warning
}

// blankIntroduction is true for a cassette that would introduce itself
// from nothing recorded.
func (s *cassetteSession) blankIntroduction() bool { return s.c.intro != nil && s.c.intro.blank }

// Handshake implements Handshaker.
func (s *cassetteSession) Handshake(req *Request) (json.RawMessage, string, bool) {
	in := s.c.intro
	if in == nil || req.Method != "initialize" {
		return nil, "", false
	}
	result, warning := in.answer(s.c.name, req)
	if negotiated := withVersion(result, req); &negotiated[0] != &result[0] {
		result = negotiated
		if warning != "" {
			warning += "; the client's earlier version in place of the recorded one"
		}
	}
	return result, warning, true
}

// negotiated is p, a recorded answer to the initialize req, with the
// protocol version the client asked for in place of the recorded one when
// the client asked for an earlier handshake-era version than the recording
// answers. A server answers the version a client asks for when it
// supports it (the spec's version negotiation), and a server of a later
// version supports the earlier ones (every SDK does): answering the
// recorded version instead, which an older client does not know, would end
// its session there. A client asking for a later version than recorded
// gets the recorded one, as the recorded server would have answered.
func negotiated(p *Prepared, req *Request) *Prepared {
	if p.Reply.Result == nil && p.Play == nil {
		return p
	}
	np := *p
	np.Reply.Result = withVersion(p.Reply.Result, req)
	if play := p.Play; play != nil {
		np.Play = func(ctx context.Context, peer Peer, req *Request) Reply {
			r := play(ctx, peer, req)
			r.Result = withVersion(r.Result, req)
			return r
		}
	}
	return &np
}

// withVersion is the initialize result with req's protocol version in
// place of its own, when that is an earlier handshake-era version (see
// negotiated); else result itself.
func withVersion(result json.RawMessage, req *Request) json.RawMessage {
	if result == nil {
		return nil
	}
	var asked, answered struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(req.Params, &asked) != nil || json.Unmarshal(result, &answered) != nil {
		return result
	}
	if !slices.Contains(handshakeVersions, asked.ProtocolVersion) || !slices.Contains(handshakeVersions, answered.ProtocolVersion) ||
		asked.ProtocolVersion >= answered.ProtocolVersion { // dates: later sorts later
		return result
	}
	v, _ := json.Marshal(asked.ProtocolVersion)
	return withMember(result, "protocolVersion", v)
}
