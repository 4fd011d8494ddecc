// Package mcphttp holds what an MCP client puts in the headers of its
// Streamable HTTP requests, for the two clients in this module (mcpspy
// rerun and mcpmock's fallback): the session's headers, and those a
// 2026-07-28 request repeats from its body.
//
// It sends nothing and keeps no state; the clients own their connections.
package mcphttp

import (
	"encoding/json"
	"net/http"
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
// Mcp-Name for the methods that name something. A frame of the handshake
// era (no version in _meta) gets nothing. Inputs a tool marks
// x-mcp-header are not sent as Mcp-Param-* headers.
func SetStateless(h http.Header, frame []byte, method string) {
	if method == "" {
		return
	}
	var f struct {
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &f) != nil || f.Params.Meta.Version == "" {
		return
	}
	h.Set("MCP-Protocol-Version", f.Params.Meta.Version)
	h.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", f.Params.Name)
	case "resources/read":
		h.Set("Mcp-Name", f.Params.URI)
	}
}
