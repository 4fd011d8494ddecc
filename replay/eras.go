package replay

import (
	"bytes"
	"fmt"
)

// Which protocol eras the live sessions spoke, for the report: a recorded
// request that only a client of the other era sends cannot have been
// asked, and is no more "unused" than the server/discover a handshake-era
// client never sends. A go-sdk↔go-sdk recording (2026-07-28) holds
// subscriptions/listen; a TypeScript SDK client replaying it never sends
// one, and --strict should not fail it for that.

// eras is a set of protocol eras the live sessions spoke.
type eras uint32

const (
	eraHandshake eras = 1 << iota // initialize answered: 2024-11-05 … 2025-11-25
	eraStateless                  // a request of 2026-07-28
)

// eraOnly names the client requests of one era alone, by the 2025-11-25
// and 2026-07-28 schemas' ClientRequest: 2026-07-28 has no handshake, no
// ping, no logging/setLevel (a per-request _meta log level instead), no
// resources/subscribe or unsubscribe and no tasks (subscriptions/listen
// carries the change notifications). server/discover and ping are left
// out of Unused whatever the eras (Cassette.Unused).
var eraOnly = map[string]eras{
	"initialize":            eraHandshake,
	"logging/setLevel":      eraHandshake,
	"resources/subscribe":   eraHandshake,
	"resources/unsubscribe": eraHandshake,
	"tasks/get":             eraHandshake,
	"tasks/result":          eraHandshake,
	"tasks/list":            eraHandshake,
	"tasks/cancel":          eraHandshake,
	"subscriptions/listen":  eraStateless,
}

// otherEra says why a recorded request of method could not have been
// asked by live sessions that spoke only live, or "" when it could have
// (or no session spoke at all: then everything recorded is unused).
func otherEra(method string, live eras) string {
	only, ok := eraOnly[method]
	if !ok || live == 0 || live&only != 0 {
		return ""
	}
	if only == eraStateless {
		return fmt.Sprintf("only a %s client sends %s, and every live session spoke the handshake era", statelessVersion, method)
	}
	return fmt.Sprintf("a %s client does not send %s, and every live session spoke %s", statelessVersion, method, statelessVersion)
}

// LeftOut is a recorded request no session asked for that Report leaves
// out of Unused, and why: only a client of the other protocol era sends
// it, and every live session spoke one era.
type LeftOut struct {
	// Request is as in Unused: "SOURCE SESSION#SEQ METHOD PARAMS".
	Request string `json:"request"`
	Why     string `json:"why"`
}

// eraUnused is implemented by sources that can tell their unused
// requests apart by era (cassettes).
type eraUnused interface {
	unusedIn(live eras) (unused []string, leftOut []LeftOut)
}

// noteEra notes the era of a live request: 2026-07-28 when its _meta says
// so. server/discover does not count: a client of 2026-07-28 probes with
// it and may fall back to initialize. Once some session has spoken
// 2026-07-28 it costs an atomic load.
func (s *Server) noteEra(req *Request) {
	if eras(s.eras.Load())&eraStateless != 0 || req.Method == "server/discover" || !bytes.Contains(req.Params, []byte(metaVersionKey)) {
		return
	}
	if req.MetaVersion() >= statelessVersion {
		s.eras.Or(uint32(eraStateless))
	}
}
