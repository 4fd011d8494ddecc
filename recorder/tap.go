// Package recorder holds the recording proxies: stdio (a child process),
// HTTP (Streamable HTTP and legacy HTTP+SSE) and WebSocket.
//
// A proxy forwards the bytes it reads, unchanged and at once; recording is a
// tap beside the forwarding path, never in it. Each frame is handed to a Tap
// when it is read and before it is forwarded, so that seq follows causal
// order. The frame slice is not copied for the store: the proxy reads it
// into a fresh buffer, forwards it and gives that same buffer to the Tap.
//
// It also holds the recording clients, for the parts of mcptape that talk
// to a real server themselves (mcpspy rerun, mcpmock's fallback): Child
// (stdio), StreamableClient (which tells a legacy server by its answers),
// LegacyClient and WSClient. They tap what they send and receive as the
// proxies would record it, so their sessions read like any recording.
package recorder

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Tap receives every frame a proxy reads. *store.Session is the Tap used in
// production. Append must be cheap and safe for concurrent use; it owns
// frame afterwards.
type Tap interface {
	Append(dir store.Dir, t time.Time, frame []byte, meta *store.HTTPMeta) uint64
}

// Amender is a Tap that can record a frame again with what was learnt
// after it went on (as store.Session.Amend does): the status of an HTTP
// answer that carried no message. The recording clients use it when
// their Tap has it. m.Seq is 0 for a frame Append gave no seq (a Tap
// that holds frames back): such a Tap finds it by its Time and Frame.
type Amender interface {
	Amend(m store.Message)
}

// tapAnswered records on a client message tapped as seq (0: the Tap gave
// none) the status of an answer that carried no message, and note, if the
// Tap can record a frame again.
func tapAnswered(tap Tap, seq uint64, at time.Time, frame []byte, meta store.HTTPMeta, status int, header http.Header, note string) {
	a, ok := tap.(Amender)
	if !ok {
		return
	}
	meta.Status, meta.ResponseHeader = status, header
	a.Amend(store.Message{Seq: seq, Dir: store.C2S, Time: at, Frame: frame, HTTP: &meta, Note: note})
}

// tapRefusalBody keeps the body of a POST's refusal, if it had one, as a
// server frame with meta, as the HTTP recorder keeps it.
func tapRefusalBody(tap Tap, body []byte, meta store.HTTPMeta) {
	if len(body) > 0 {
		tap.Append(store.S2C, time.Now(), body, &meta)
	}
}

// refusalNote is the note kept on a client message whose POST was
// refused with body, which carried no message.
func refusalNote(body []byte) string {
	b := strings.TrimSpace(string(body))
	if b == "" {
		return ""
	}
	const max = 200
	if len(b) > max {
		b = b[:max] + "…"
	}
	return "refused without a message: " + strings.ToValidUTF8(b, "\uFFFD")
}

// ObserveHandshake notes what the opening exchange of a session tells, for
// the session's info. It is a store.WriterOptions.Observe function: it runs
// on the store's commit goroutine, off the forwarding path.
//
// Handshake era: the initialize request gives clientInfo and the requested
// version; its result gives serverInfo and the negotiated version.
// 2026-07-28: server/discover and the per-request _meta give the same.
// go-sdk clients send server/discover first and fall back to initialize, so
// initialize wins when both appear.
func ObserveHandshake(info *store.SessionInfo, m *store.Message, s *store.Summary) bool {
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
