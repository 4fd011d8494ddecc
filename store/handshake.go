package store

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// metaVersion names the protocol version in a 2026-07-28 request's _meta.
const metaVersion = "io.modelcontextprotocol/protocolVersion"

// ObserveHandshake notes what the opening exchange of a session tells, for
// the session's info. It is a WriterOptions.Observe function: it runs
// on the store's commit goroutine, off the forwarding path.
//
// Handshake era: the initialize request gives clientInfo and the requested
// version; its result gives serverInfo and the negotiated version.
// 2026-07-28: server/discover gives clientInfo; its version counts only
// once the answer lists it in supportedVersions (a probe the server
// refused, or answered with other versions, says nothing of what the
// session spoke). A session with no initialize, and no discover that
// settled a version (a sessionless client's connection), takes the version
// and clientInfo of its first client request whose _meta names one.
// go-sdk clients send server/discover first and fall back to initialize, so
// initialize wins when both appear.
func ObserveHandshake(info *SessionInfo, m *Message, s *Summary) bool {
	h := &info.Handshake
	switch {
	case s.Kind == jsonrpc.Request && s.Method == "initialize":
		version, clientInfo, ok := initializeParams(m.Frame)
		if !ok {
			return false
		}
		h.Method = "initialize"
		h.ProtocolVersion = version
		h.ClientInfo = clientInfo
		return true
	case s.Kind == jsonrpc.Request && s.Method == "server/discover" && h.Method == "":
		// Its version counts once the answer lists it: see observeAnswer.
		asked, clientInfo, ok := requestMeta(m.Frame)
		if !ok {
			return false
		}
		h.Method, h.discoverAsked = "server/discover", asked
		if clientInfo != nil {
			h.ClientInfo = clientInfo
		}
		return true
	case s.Kind == jsonrpc.Request && s.Dir == C2S && h.Method != "initialize" && h.ProtocolVersion == "" &&
		bytes.Contains(m.Frame, []byte(metaVersion)):
		version, clientInfo, ok := requestMeta(m.Frame)
		if !ok || version == "" {
			return false
		}
		h.ProtocolVersion = version
		if clientInfo != nil {
			h.ClientInfo = clientInfo
		}
		return true
	case s.Kind == jsonrpc.Response:
		return observeAnswer(h, m)
	}
	return false
}

// initializeParams reads the version and clientInfo an initialize
// request asks with. ok is false for a frame that is not a JSON object, or
// whose params, version or clientInfo has the wrong type.
func initializeParams(frame []byte) (version string, clientInfo json.RawMessage, ok bool) {
	return paramsPair(frame, nil, "protocolVersion", "clientInfo")
}

// requestMeta reads the version and clientInfo a request's _meta names;
// ok as for initializeParams.
func requestMeta(frame []byte) (version string, clientInfo json.RawMessage, ok bool) {
	return paramsPair(frame, []string{"_meta"}, metaVersion, metaClientInfo)
}

// metaClientInfo names the client in a 2026-07-28 request's _meta.
const metaClientInfo = "io.modelcontextprotocol/clientInfo"

// paramsPair reads a string member and an object member of the object at
// params (then down path). It walks the frame with the jsonrpc scanner,
// not encoding/json: the first stateless request of a session may be a
// tools/call carrying tens of MiB, and this runs on the store's commit
// goroutine. The frame is validated once, as it is split; the look-ups
// inside params then step over what they pass unchecked. What it keeps is copied: a slice of the frame would hold the
// whole frame for as long as the session's info lives.
func paramsPair(frame []byte, path []string, stringName, rawName string) (str string, raw json.RawMessage, ok bool) {
	var at []byte
	if !jsonrpc.Members(frame, func(name, value []byte) {
		if string(name) == "params" {
			at = value
		}
	}) {
		return "", nil, false
	}
	for _, name := range path {
		if !objectOrAbsent(at) {
			return "", nil, false
		}
		at = jsonrpc.MemberOfValid(at, name)
	}
	if !objectOrAbsent(at) {
		return "", nil, false
	}
	var strValue, rawValue []byte
	jsonrpc.MembersOfValid(at, func(name, value []byte) {
		switch string(name) {
		case stringName:
			strValue = value
		case rawName:
			rawValue = value
		}
	})
	if strValue != nil && !isNull(strValue) {
		if str, ok = jsonrpc.String(strValue); !ok {
			return "", nil, false
		}
	}
	if rawValue != nil {
		raw = bytes.Clone(rawValue)
	}
	return str, raw, true
}

// objectOrAbsent: v is missing, null or an object, what encoding/json
// decodes into a struct without error.
func objectOrAbsent(v []byte) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) == 0 || isNull(v) || v[0] == '{'
}

func isNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// observeAnswer notes what a result tells: serverInfo (once), the
// negotiated version of initialize, and whether a server/discover answer
// lists the version the probe asked for.
func observeAnswer(h *Handshake, m *Message) bool {
	named := h.ServerInfo == nil && (h.Method != "" || h.ProtocolVersion != "") && bytes.Contains(m.Frame, []byte("serverInfo"))
	discovered := h.Method == "server/discover" && h.ProtocolVersion == "" && bytes.Contains(m.Frame, []byte("supportedVersions"))
	if !named && !discovered {
		// The byte searches spare a full parse of every response of a
		// server that never names itself.
		return false
	}
	var resp struct {
		Result struct {
			ProtocolVersion   string          `json:"protocolVersion"`
			SupportedVersions []string        `json:"supportedVersions"`
			ServerInfo        json.RawMessage `json:"serverInfo"`
			Capabilities      json.RawMessage `json:"capabilities"`
			Instructions      string          `json:"instructions"`
			Meta              struct {
				ServerInfo json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		} `json:"result"`
	}
	if json.Unmarshal(m.Frame, &resp) != nil {
		return false
	}
	changed := false
	if discovered {
		// The version the probe asked for: the header of the request this
		// answers, over HTTP, else the discover's own _meta (stdio; the
		// TypeScript SDK v2 client probes on a process of its own, so
		// no request follows in that session to tell it).
		v := h.discoverAsked
		if m.HTTP != nil {
			if hv := http.Header(m.HTTP.RequestHeader).Get("Mcp-Protocol-Version"); hv != "" {
				v = hv
			}
		}
		if v != "" && slices.Contains(resp.Result.SupportedVersions, v) {
			h.ProtocolVersion = v
			changed = true
		}
	}
	if !named {
		return changed
	}
	// The stateless era carries serverInfo in every result's _meta.
	serverInfo := resp.Result.ServerInfo
	if serverInfo == nil {
		serverInfo = resp.Result.Meta.ServerInfo
	}
	if serverInfo == nil {
		return changed
	}
	h.ServerInfo = serverInfo
	if resp.Result.ProtocolVersion != "" {
		h.ProtocolVersion = resp.Result.ProtocolVersion
	}
	h.Capabilities = resp.Result.Capabilities
	h.Instructions = resp.Result.Instructions
	return true
}
