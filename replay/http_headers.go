package replay

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/mcphttp"
)

// The MCP headers of a Streamable HTTP POST, checked as a real server must
// check them, so that a host tested against mcpmock does not first meet
// these errors in production: a body that is not said to be JSON is a 415,
// an Accept that does not list both answer types a 406 (as the TypeScript
// SDK's server answers both), an unknown MCP-Protocol-Version is a 400
// (2025-06-18 on), and in 2026-07-28 the headers that mirror the body
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) must be there and agree
// with it, else 400 with -32020. go-sdk's StreamableHTTPHandler answers
// the same requests with the same statuses and codes (see
// TestHTTP_HeaderChecksMatchGoSDK).

const (
	statelessVersion = "2026-07-28"
	metaVersionKey   = "io.modelcontextprotocol/protocolVersion"

	codeHeaderMismatch     = -32020
	codeUnsupportedVersion = -32022
)

// httpVersions are the versions an MCP-Protocol-Version header may name.
var httpVersions = append([]string{statelessVersion}, handshakeVersions...)

// headerError is a POST refused for its headers: the HTTP status and the
// JSON-RPC error the body carries.
type headerError struct {
	status int
	err    *RPCError
}

// checkHeaders returns why a POST's headers are refused, or nil.
func checkHeaders(h http.Header, p *peek) *headerError {
	version := h.Get("Mcp-Protocol-Version")
	if version != "" && !slices.Contains(httpVersions, version) {
		data, _ := json.Marshal(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{httpVersions, version})
		return &headerError{http.StatusBadRequest, &RPCError{
			Code:    codeUnsupportedVersion,
			Message: fmt.Sprintf("Bad Request: unsupported MCP-Protocol-Version header %q (mcpmock speaks %s)", version, strings.Join(httpVersions, ", ")),
			Data:    data,
		}}
	}
	isRequest := len(p.ID) > 0 && string(p.ID) != "null" && p.Method != ""
	metaVersion, _ := jsonString(p.Params.Meta[metaVersionKey])
	if isRequest && (version >= statelessVersion || metaVersion != "") {
		switch {
		case version == "":
			return mismatch("the MCP-Protocol-Version header is required on a request whose _meta names %s %q", metaVersionKey, metaVersion)
		case metaVersion == "":
			return &headerError{http.StatusBadRequest, &RPCError{Code: -32602, Message: fmt.Sprintf("Invalid params: a %s request must carry _meta %q", version, metaVersionKey)}}
		case version != metaVersion:
			return mismatch("the MCP-Protocol-Version header %q does not match _meta %s %q", version, metaVersionKey, metaVersion)
		}
	}
	if version < statelessVersion || p.Method == "" {
		return nil
	}
	switch got := h.Get("Mcp-Method"); {
	case got == "":
		return mismatch("the Mcp-Method header is required (the body's method is %s)", p.Method)
	case got != p.Method:
		return mismatch("the Mcp-Method header %q does not match the body's method %q", got, p.Method)
	}
	var name json.RawMessage
	switch p.Method {
	case "tools/call", "prompts/get":
		name = p.Params.Name
	case "resources/read":
		name = p.Params.URI
	default:
		return nil
	}
	want, _ := jsonString(name)
	switch got := h.Get("Mcp-Name"); {
	case got == "":
		return mismatch("the Mcp-Name header is required for %s (the body names %q)", p.Method, want)
	case !mcphttp.NameMatches(got, want):
		return mismatch("the Mcp-Name header %q does not match the body's %q", got, want)
	}
	return nil
}

func mismatch(format string, a ...any) *headerError {
	return &headerError{http.StatusBadRequest, &RPCError{Code: codeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, a...)}}
}

// jsonString decodes a JSON string; ok is false for anything else.
func jsonString(raw json.RawMessage) (s string, ok bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// checkMediaTypes refuses a POST whose Content-Type is not JSON, or whose
// Accept does not list both kinds of answer (the client MUST list both,
// since the server picks). Media ranges (*/*) do not count: the TypeScript
// SDK's server refuses them, and a host that sends them would fail there.
func checkMediaTypes(h http.Header) *headerError {
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt != "application/json" {
		return &headerError{http.StatusUnsupportedMediaType, &RPCError{Code: -32000, Message: fmt.Sprintf("Unsupported Media Type: Content-Type is %q; an MCP POST body is application/json", h.Get("Content-Type"))}}
	}
	if !mcphttp.Accepts(h, "application/json") || !mcphttp.Accepts(h, "text/event-stream") {
		return &headerError{http.StatusNotAcceptable, &RPCError{Code: -32000, Message: fmt.Sprintf("Not Acceptable: Accept is %q; an MCP client must accept both application/json and text/event-stream", strings.Join(h.Values("Accept"), ", "))}}
	}
	return nil
}
