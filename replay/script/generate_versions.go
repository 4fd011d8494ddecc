package script

import (
	"encoding/json"
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// This file finds which protocol versions the recorded server spoke, for
// FromTape's server.protocolVersions. A script offers all five by
// default, so without it a 2026-07-28 client (go-sdk's tries
// server/discover first) would talk 2026-07-28 to the fake of a server
// that only ever spoke 2025-11-25, and a host be tested on a path the
// real server never takes.

// handshakeVersions are the versions initialize can negotiate.
var handshakeVersions = slices.DeleteFunc(slices.Clone(knownVersions), func(v string) bool { return v == statelessVersion })

// versionsSeen is what sessions show of the versions their server
// speaks.
type versionsSeen struct {
	spoken map[string]bool
	// handshake: a handshake told which versions (spoken holds them);
	// plain: a request of the handshake era was sent (its _meta names
	// no version, as every 2026-07-28 request's does).
	handshake, plain bool
}

// request notes what a client request says of its era.
func (v *versionsSeen) request(params json.RawMessage) {
	if requestVersion(params) == "" {
		v.plain = true
	}
}

// answer notes the versions an answer to x shows the server speaking.
// A handshake tells: the version initialize negotiated, those
// server/discover lists, those a -32022 (unsupported version) error
// names as supported. A result to a 2026-07-28 request, or one of that
// era (it has a resultType), tells that the server speaks it.
func (v *versionsSeen) answer(x *exchange, result, rpcErr json.RawMessage) {
	var told []string
	switch {
	case len(result) > 0 && x.method == "initialize":
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(result, &r)
		told = append(told, r.ProtocolVersion)
	case len(result) > 0 && x.method == "server/discover":
		var r struct {
			SupportedVersions []string `json:"supportedVersions"`
		}
		_ = json.Unmarshal(result, &r)
		told = append(told, r.SupportedVersions...)
	case len(rpcErr) > 0:
		var e struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		}
		if json.Unmarshal(rpcErr, &e) == nil && e.Code == -32022 {
			told = append(told, e.Data.Supported...)
		}
	}
	for _, s := range told {
		if v.speaks(s) {
			v.handshake = true
		}
	}
	if len(result) == 0 {
		return
	}
	if s := requestVersion(x.params); s != "" {
		v.speaks(s)
	} else if jsonrpc.Member(result, "resultType") != nil {
		v.speaks(statelessVersion)
	}
}

// speaks notes that the server speaks s, if it is a version a script
// knows, and says whether it was.
func (v *versionsSeen) speaks(s string) bool {
	if !slices.Contains(knownVersions, s) {
		return false
	}
	if v.spoken == nil {
		v.spoken = map[string]bool{}
	}
	v.spoken[s] = true
	return true
}

// info takes what the session's info kept of its handshake, for a
// session whose handshake was cut from its frames: the version is the
// server's when the server's answer was seen (it named the server).
func (v *versionsSeen) info(h store.Handshake) {
	if v.handshake || len(h.ServerInfo) == 0 || (h.Method != "initialize" && h.Method != "server/discover") {
		return
	}
	v.handshake = v.speaks(h.ProtocolVersion)
}

// requestVersion is the 2026-07-28 version a request's _meta names, or "".
func requestVersion(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.Meta.Version
}

// addVersions takes one session's versionsSeen into the recording's.
func (r *recording) addVersions(v versionsSeen) {
	for s := range v.spoken {
		r.versions.speaks(s)
	}
	r.versions.handshake = r.versions.handshake || v.handshake
	r.versions.plain = r.versions.plain || v.plain
}

// protocolVersions is server.protocolVersions, oldest first: every
// version the recording shows the server speaking. Without a handshake
// in any session, requests of the handshake era show that the server
// speaks it, but not which version: any, then, as a cassette takes it
// too (its server/discover gets -32601). Nil (a script's default, all
// five) when nothing tells.
func (r *recording) protocolVersions() (n *yaml.Node, comment string) {
	spoken := maps.Clone(r.versions.spoken)
	if !r.versions.handshake && r.versions.plain {
		for _, v := range handshakeVersions {
			spoken[v] = true
		}
		comment = "No handshake was recorded, and the requests were of the handshake era: any version of it."
	}
	if len(spoken) == 0 {
		return nil, ""
	}
	n = seqNode()
	for _, v := range slices.Backward(knownVersions) {
		if spoken[v] {
			n.Content = append(n.Content, strNode(v))
		}
	}
	return flow(n), comment
}
