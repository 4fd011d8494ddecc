// Package mcphttp holds what an MCP client puts in the headers of its
// Streamable HTTP requests, for the two clients in this module (mcpspy
// rerun and mcpmock's fallback): the session's headers, and those a
// 2026-07-28 request repeats from its body (Mcp-Method, Mcp-Name, and the
// Mcp-Param-<Name> headers of the inputs a tool marks x-mcp-header).
//
// It also says which headers of a refused POST mcpmock replays (refusal.go).
//
// It sends nothing and keeps no state; the clients own their connections,
// and what a client knows of each tool's schema.
package mcphttp

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// SetSession copies user's headers (credentials) into h, then the session
// id and the negotiated protocol version once known (each "" before).
func SetSession(h, user http.Header, sessionID, version string) {
	for k, vs := range user {
		h[k] = vs
	}
	if sessionID != "" {
		h.Set("Mcp-Session-Id", sessionID)
	}
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
}

// SetStateless sets what a 2026-07-28 request must carry in headers as
// well as in its body: the version from params._meta, Mcp-Method, and
// Mcp-Name (encoded as EncodeValue does) for the methods that name
// something. A frame of the handshake era (no version in _meta) gets
// nothing, and SetStateless reports false. The Mcp-Param-* headers need
// the tool's schema: SetParams sets them.
func SetStateless(h http.Header, frame []byte, method string) bool {
	if method == "" {
		return false
	}
	// jsonrpc's scanner, not encoding/json: a 64 MiB tools/call passes
	// here on its way out, and encoding/json went through it twice (to
	// validate, then to decode) at a fifth of the speed.
	var name, uri, meta []byte
	if !jsonrpc.Members(jsonrpc.Member(frame, "params"), func(n, v []byte) {
		switch string(n) {
		case "name":
			name = v
		case "uri":
			uri = v
		case "_meta":
			meta = v
		}
	}) {
		return false
	}
	version, ok := optionalString(jsonrpc.Member(meta, "io.modelcontextprotocol/protocolVersion"))
	if !ok || version == "" {
		return false
	}
	nameText, nameOK := optionalString(name)
	uriText, uriOK := optionalString(uri)
	if !nameOK || !uriOK {
		return false // a request the server will refuse; headers would not help
	}
	h.Set("MCP-Protocol-Version", version)
	h.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", EncodeValue(nameText))
	case "resources/read":
		h.Set("Mcp-Name", EncodeValue(uriText))
	}
	return true
}

// optionalString is the JSON string v, "" when v is absent (nil) or
// null; ok is false for any other value.
func optionalString(v []byte) (s string, ok bool) {
	if v == nil || string(v) == "null" {
		return "", true
	}
	return jsonrpc.String(v)
}

// Sentinel markers of a Base64-encoded header value (2026-07-28, Value
// Encoding): case-sensitive, exactly so.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// EncodeValue is a value for Mcp-Name or Mcp-Param-<Name> as 2026-07-28's
// Value Encoding has it: as it stands when it is plain visible ASCII and
// spaces with no space or tab at either end, else "=?base64?…?=" around
// the standard Base64 of its UTF-8 bytes. A plain value that looks like
// the sentinel is encoded too, so that it cannot be taken for one.
//
// The empty string is encoded as well ("=?base64??="), which the spec
// does not ask for: an empty header is one that many HTTP stacks drop or
// read as missing, and a present-but-empty argument must not look like
// an absent one (go-sdk's server rejects an empty Mcp-Param-* as missing).
func EncodeValue(s string) string {
	if plainHeaderValue(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func plainHeaderValue(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		// Visible ASCII and space only: a tab is a control character,
		// and anything from 0x7F up is not ASCII text.
		if s[i] < 0x20 || s[i] > 0x7E {
			return false
		}
	}
	return !(strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix))
}
