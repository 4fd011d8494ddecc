package store

import (
	"bytes"
	"encoding/json"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// ObserveHandshake notes what the opening exchange of a session tells, for
// the session's info. It is a WriterOptions.Observe function: it runs
// on the store's commit goroutine, off the forwarding path.
//
// Handshake era: the initialize request gives clientInfo and the requested
// version; its result gives serverInfo and the negotiated version.
// 2026-07-28: server/discover and the per-request _meta give the same.
// go-sdk clients send server/discover first and fall back to initialize, so
// initialize wins when both appear.
func ObserveHandshake(info *SessionInfo, m *Message, s *Summary) bool {
	h := &info.Handshake
	switch {
	case s.Kind == jsonrpc.Request && s.Method == "initialize":
		var req struct {
			Params struct {
				ProtocolVersion string          `json:"protocolVersion"`
				ClientInfo      json.RawMessage `json:"clientInfo"`
			} `json:"params"`
		}
		if json.Unmarshal(m.Frame, &req) != nil {
			return false
		}
		h.Method = "initialize"
		h.ProtocolVersion = req.Params.ProtocolVersion
		h.ClientInfo = req.Params.ClientInfo
		return true
	case s.Kind == jsonrpc.Request && s.Method == "server/discover" && h.Method == "":
		var req struct {
			Params struct {
				Meta struct {
					Version    string          `json:"io.modelcontextprotocol/protocolVersion"`
					ClientInfo json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(m.Frame, &req) != nil {
			return false
		}
		h.Method = "server/discover"
		h.ProtocolVersion = req.Params.Meta.Version
		h.ClientInfo = req.Params.Meta.ClientInfo
		return true
	case s.Kind == jsonrpc.Response && h.ServerInfo == nil && h.Method != "" && bytes.Contains(m.Frame, []byte("serverInfo")):
		// The stateless era carries serverInfo in every result's _meta. The
		// byte search spares a full parse of every response of a server
		// that never names itself.
		var resp struct {
			Result struct {
				ProtocolVersion string          `json:"protocolVersion"`
				ServerInfo      json.RawMessage `json:"serverInfo"`
				Capabilities    json.RawMessage `json:"capabilities"`
				Instructions    string          `json:"instructions"`
				Meta            struct {
					ServerInfo json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
				} `json:"_meta"`
			} `json:"result"`
		}
		if json.Unmarshal(m.Frame, &resp) != nil {
			return false
		}
		h.ServerInfo = resp.Result.ServerInfo
		if h.ServerInfo == nil {
			h.ServerInfo = resp.Result.Meta.ServerInfo
		}
		if h.ServerInfo == nil {
			return false
		}
		if resp.Result.ProtocolVersion != "" {
			h.ProtocolVersion = resp.Result.ProtocolVersion
		}
		h.Capabilities = resp.Result.Capabilities
		h.Instructions = resp.Result.Instructions
		return true
	}
	return false
}
