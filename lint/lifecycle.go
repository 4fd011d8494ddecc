package lint

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/store"
)

// Protocol versions this linter knows, oldest first. They are dates, so
// they compare as strings.
var knownVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	statelessVersion = "2026-07-28"
)

// seed takes what the session info knows of the handshake, so that a
// session whose handshake was cut out (a filtered export) is still judged
// by its version and its server's capabilities. The messages override it.
func (c *checker) seed() {
	h := c.info.Handshake
	c.version = h.ProtocolVersion
	if caps := objectMembers(h.Capabilities); caps != nil {
		c.serverCaps, c.serverCapsKnown = caps, true
	}
}

// lifecycleRequest follows the handshake and checks what a request may do
// at its point in it.
func (c *checker) lifecycleRequest(f *frame, r *request) {
	meta := objectMembers(member(f.params, "_meta"))
	if v, ok := stringOf(meta[metaVersion]); ok && f.dir == store.C2S && c.era != eraHandshake {
		c.era = eraStateless
		c.setVersion(f.seq, v)
		if caps := objectMembers(meta[metaCapabilities]); caps != nil {
			c.clientCaps, c.clientCapsKnown = caps, true
		}
	}
	switch {
	case f.dir == store.C2S && f.method == "initialize":
		c.initializeRequest(f, r)
	case c.era == eraStateless && f.dir == store.C2S:
		if _, ok := meta[metaVersion]; !ok {
			c.report("meta-version-missing", f.seq, 0, "%s has no _meta %q, which every 2026-07-28 request carries", f.method, metaVersion)
		}
	case f.dir == store.C2S && f.method != "ping" && f.method != "server/discover":
		if c.initAnswered == 0 && c.negotiatedElsewhere(f) {
			break
		}
		if c.initAnswered == 0 {
			c.early = append(c.early, r)
		} else if c.initialized == 0 && c.usedBeforeInitialized == 0 {
			c.usedBeforeInitialized = f.seq
		}
	case f.dir == store.S2C && f.method != "ping" && c.era == eraHandshake && c.initialized == 0:
		c.report("server-request-before-initialized", f.seq, 0, "the server sends %s before the client's notifications/initialized", f.method)
	}
}

// connectionShare says whether the session is one connection's share of
// a client's traffic to a server without sessions: mcpspy records each
// connection as a session of its own, and a client (the TypeScript SDK's)
// may send its initialize on one and its notifications/initialized and
// requests on others.
func (c *checker) connectionShare() bool {
	return c.info.Transport == store.TransportHTTP && c.info.HTTPSessionID == ""
}

// negotiatedElsewhere says whether a request seen before any initialize
// of the session comes from a client that had its handshake on another
// connection (its MCP-Protocol-Version header, 2025-06-18 on, says what
// it negotiated), and takes the session as begun so.
func (c *checker) negotiatedElsewhere(f *frame) bool {
	if c.initRequest != nil || len(c.early) > 0 || !c.connectionShare() || f.http == nil {
		return false
	}
	v := http.Header(f.http.RequestHeader).Get("Mcp-Protocol-Version")
	if v == "" || v >= statelessVersion {
		return false
	}
	c.era = eraHandshake
	c.setVersion(f.seq, v)
	c.initAnswered, c.initialized = f.seq, f.seq
	return true
}

func (c *checker) initializeRequest(f *frame, r *request) {
	if c.initRequest == nil {
		c.initRequest = r
	}
	p := objectMembers(f.params)
	c.need(f.seq, "initialize params", p, "protocolVersion", "capabilities", "clientInfo")
	if caps := objectMembers(p["capabilities"]); caps != nil {
		c.clientCaps, c.clientCapsKnown = caps, true
	}
}

func (c *checker) initializeResult(f *frame, r *request) {
	res := objectMembers(f.result)
	c.need(f.seq, "the initialize result", res, "protocolVersion", "capabilities", "serverInfo")
	if r != c.initRequest {
		return
	}
	c.era = eraHandshake
	c.initAnswered = f.seq
	if v, ok := stringOf(res["protocolVersion"]); ok {
		c.setVersion(f.seq, v)
	}
	if caps := objectMembers(res["capabilities"]); caps != nil {
		c.serverCaps, c.serverCapsKnown = caps, true
	}
}

func (c *checker) discoverResult(f *frame) {
	res := objectMembers(f.result)
	c.need(f.seq, "the server/discover result", res, "supportedVersions", "capabilities")
	if c.era == eraHandshake {
		return
	}
	c.era = eraStateless
	if caps := objectMembers(res["capabilities"]); caps != nil {
		c.serverCaps, c.serverCapsKnown = caps, true
	}
}

// need reports the members an object lacks.
func (c *checker) need(seq uint64, what string, obj map[string]json.RawMessage, names ...string) {
	var missing []string
	for _, n := range names {
		if v, ok := obj[n]; !ok || string(v) == "null" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		c.report("handshake-fields", seq, 0, "%s lacks %s", what, strings.Join(missing, ", "))
	}
}

func (c *checker) setVersion(seq uint64, v string) {
	if v == c.version {
		return
	}
	c.version = v
	for _, k := range knownVersions {
		if k == v {
			return
		}
	}
	c.report("version-unknown", seq, 0, "protocol version %q is none of %s", v, strings.Join(knownVersions, ", "))
}

// atLeast reports whether the session's version is v or later; an unknown
// version is taken as the newest, so version-gated checks still run.
func (c *checker) atLeast(v string) bool { return c.version == "" || c.version >= v }

func (c *checker) lifecycleEnd() {
	if c.era == eraHandshake {
		for _, r := range c.early {
			c.report("request-before-initialize", r.seq, c.initRequest.seq, "the client sends %s before initialize was answered", r.method)
		}
		if c.initializedEarly != 0 {
			c.report("initialized-early", c.initializedEarly, c.initRequest.seq, "the client sends notifications/initialized before initialize was answered")
		}
		if c.initialized == 0 && c.usedBeforeInitialized != 0 && !c.connectionShare() {
			c.report("initialized-missing", c.usedBeforeInitialized, c.initAnswered, "the client goes on after initialize without ever sending notifications/initialized")
		}
	}
	if c.era == eraUnknown && c.initRequest == nil && len(c.early) > 0 {
		c.report("no-handshake", 0, 0, "no initialize, server/discover or per-request protocol version: the client's first request is %s at #%d", c.early[0].method, c.early[0].seq)
	}
}
