package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcptape/mcptape/internal/jsonrpc"
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
// carries the change notifications). ping is left out of Unused whatever
// the eras (Cassette.Unused), and so is server/discover when not left out
// here: a 2026-07-28 client may version each request instead.
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
	"server/discover":       eraStateless,
}

// otherEra says why a recorded request of method, with canonical params
// canon, could not have been asked by live sessions that spoke only
// live, or "" when it could have (or no session spoke at all: then
// everything recorded is unused). Besides the methods of eraOnly, a
// tools/call made as a task (params.task, 2025-11-25): 2026-07-28 has
// no tasks, and its CallToolRequestParams no task member.
func otherEra(method string, canon []byte, live eras) string {
	only, ok := eraOnly[method]
	what := method
	if !ok && jsonrpc.TaskAugmentable(method) && jsonrpc.Member(canon, "task") != nil {
		only, ok, what = eraHandshake, true, method+" as a task (params.task)"
	}
	if !ok || live == 0 || live&only != 0 {
		return ""
	}
	if only == eraStateless {
		return fmt.Sprintf("only a %s client sends %s, and every live session spoke the handshake era", statelessVersion, what)
	}
	return fmt.Sprintf("a %s client does not send %s, and every live session spoke %s", statelessVersion, what, statelessVersion)
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

// A 2026-07-28 recording replayed to a handshake-era client: the answers
// carry what only 2026-07-28 has, which a real server that negotiated
// the client's version would not send (the 2026-07-28 schema's Result,
// CacheableResult and the reserved _meta keys of results and
// notifications). The cassette leaves it out of what such a session is
// sent, once the engine has told it the client's era (handshakeTold);
// nothing else changes, and a replay to a client of the recorded era
// stays byte for byte.

// handshakeTold is a session source told when its session's client
// turns out to speak the handshake era (its initialize answered so).
type handshakeTold interface{ spokeHandshake() }

func (s *cassetteSession) spokeHandshake() { s.handshake.Store(true) }

// acrossEras says whether it, recorded in 2026-07-28, goes to a client of
// the handshake era: then without what only 2026-07-28 has.
func (s *cassetteSession) acrossEras(it *interaction) bool {
	return s.c.stateless != nil && s.handshake.Load() && s.c.stateless[it.sess]
}

// asRecorded is it's answer as built at load, to this session's client.
func (s *cassetteSession) asRecorded(it *interaction) *Prepared {
	if !s.acrossEras(it) {
		return &it.prep
	}
	return &Prepared{Reply: handshakeReply(it.prep.Reply), SSE: it.prep.SSE}
}

// handshakeReply is a 2026-07-28 reply as a server of the handshake era
// sends it: its result by handshakeResult, the notifications after it by
// handshakeParams.
func handshakeReply(r Reply) Reply {
	if r.Result != nil {
		r.Result = handshakeResult(r.Result)
	}
	if len(r.After) > 0 {
		after := make([]Outgoing, len(r.After))
		for i, o := range r.After {
			if !o.Request {
				o.Params = handshakeParams(o.Params)
			}
			after[i] = o
		}
		r.After = after
	}
	return r
}

// 2026-07-28's reserved _meta keys: who answered (every result) and which
// subscriptions/listen stream carried a notification.
const (
	metaServerInfoKey   = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionKey = "io.modelcontextprotocol/subscriptionId"
)

// handshakeResult is a 2026-07-28 result as a server of the handshake era
// answers: without resultType, ttlMs, cacheScope and the reserved _meta
// keys; result itself when it has none of them.
func handshakeResult(result json.RawMessage) json.RawMessage {
	return pruned(result, func(name, v []byte) []byte {
		switch string(name) {
		case "resultType", "ttlMs", "cacheScope":
			return nil
		case "_meta":
			return prunedMeta(v)
		}
		return v
	})
}

// handshakeParams is the params of a 2026-07-28 notification as a server
// of the handshake era sends them: without the listen stream's
// subscriptionId; nil when nothing else was in them.
func handshakeParams(params json.RawMessage) json.RawMessage {
	p := pruned(params, func(name, v []byte) []byte {
		if string(name) == "_meta" {
			return prunedMeta(v)
		}
		return v
	})
	if len(p) < len(params) && string(p) == "{}" {
		return nil
	}
	return p
}

// handshakeCapabilities is the capabilities a 2026-07-28 server declared
// (its server/discover answer) as a server of the handshake era declares
// them in answer to initialize: without extensions, which only the
// 2026-07-28 schema's ServerCapabilities has (2025-11-25's has none);
// caps itself when it has none.
func handshakeCapabilities(caps json.RawMessage) json.RawMessage {
	return pruned(caps, func(name, v []byte) []byte {
		if string(name) == "extensions" {
			return nil
		}
		return v
	})
}

// prunedMeta is a _meta without 2026-07-28's reserved keys of answers, nil
// when only they were in it (an empty _meta recorded as such stays).
func prunedMeta(meta []byte) []byte {
	return prunedMetaOf(meta, metaServerInfoKey, metaSubscriptionKey)
}

// prunedMetaOf is a _meta without keys, nil when only they were in it.
func prunedMetaOf(meta []byte, keys ...string) []byte {
	m := pruned(meta, func(name, v []byte) []byte {
		for _, k := range keys {
			if string(name) == k {
				return nil
			}
		}
		return v
	})
	if len(m) < len(meta) && string(m) == "{}" {
		return nil
	}
	return m
}

// pruned is obj, a JSON object, with each member's value what edit makes
// of it (given the name unescaped): the value itself, a shorter one, or
// nil to leave the member out; every other byte as it was. obj itself
// when edit changed nothing, or obj is no object.
func pruned(obj []byte, edit func(name, value []byte) []byte) []byte {
	type member struct{ key, value []byte }
	var kept []member
	changed := false
	valid := jsonrpc.RawMembers(obj, func(key, value []byte) {
		name := key[1 : len(key)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			name = []byte(keyString(key))
		}
		v := edit(name, value)
		if len(v) != len(value) {
			changed = true
		}
		if v != nil {
			kept = append(kept, member{key, v})
		}
	})
	if !valid || !changed {
		return obj
	}
	out := make([]byte, 0, len(obj))
	out = append(out, '{')
	for i, m := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, m.key...), ':'), m.value...)
	}
	return append(out, '}')
}

// A handshake-era recording replayed to a 2026-07-28 client, the other
// way round: its results lack what the 2026-07-28 schema requires of
// every result (resultType) and of a complete cacheable one (ttlMs and
// cacheScope), and the TypeScript SDK v2 client refuses an answer without
// them. A cassette whose recordings all spoke the handshake era refuses
// server/discover, so a client that probes first falls back to
// initialize; this is for a cassette holding both eras (its recorded
// discover lets the client in), and for a client that does not probe.
// Such a result goes with resultType "complete" and, if cacheable, ttlMs 0
// and cacheScope "private" (the recording says nothing of how long its
// answer stays fresh: stale at once, for this client alone), appended;
// every other byte as recorded.

// cacheable are the methods whose complete 2026-07-28 results carry ttlMs
// and cacheScope (the schema's CacheableResult).
var cacheable = map[string]bool{
	"server/discover": true, "tools/list": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
}

// Cacheable says whether a complete 2026-07-28 result of method must carry
// ttlMs and cacheScope (the schema's CacheableResult).
func Cacheable(method string) bool { return cacheable[method] }

// forEra is p, the answer recorded in it's session, to the live request
// req: a handshake-era answer to a 2026-07-28 request by statelessResult.
func (s *cassetteSession) forEra(req *Request, it *interaction, p *Prepared) *Prepared {
	if p == nil || s.handshake.Load() || s.c.stateless[it.sess] || !statelessMeta(req.Params) {
		return p
	}
	method := req.Method
	q := *p
	q.Reply = statelessReply(method, p.Reply)
	if play := p.Play; play != nil {
		q.Play = func(ctx context.Context, peer Peer, req *Request) Reply {
			return statelessReply(method, play(ctx, peer, req))
		}
	}
	return &q
}

func statelessReply(method string, r Reply) Reply {
	if r.Result != nil {
		r.Result = statelessResult(method, r.Result)
	}
	return r
}

// statelessResult is a handshake-era result of method as a 2026-07-28
// server answers: with resultType, ttlMs and cacheScope as above, each
// unless it is there; result itself when nothing is added or it is no
// object.
func statelessResult(method string, result json.RawMessage) json.RawMessage {
	var add []string
	resultType := jsonrpc.Member(result, "resultType")
	if resultType == nil {
		add = append(add, `"resultType":"complete"`)
	}
	if cacheable[method] && (resultType == nil || string(resultType) == `"complete"`) {
		if jsonrpc.Member(result, "ttlMs") == nil {
			add = append(add, `"ttlMs":0`)
		}
		if jsonrpc.Member(result, "cacheScope") == nil {
			add = append(add, `"cacheScope":"private"`)
		}
	}
	return appendMembers(result, add)
}

// appendMembers is obj, a JSON object, with members (each `"name":value`)
// added at its end; obj itself when there are none or it is no object.
func appendMembers(obj []byte, members []string) []byte {
	trimmed := bytes.TrimSpace(obj)
	if len(members) == 0 || len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return obj
	}
	body := trimmed[:len(trimmed)-1]
	out := make([]byte, 0, len(trimmed)+64)
	out = append(out, body...)
	sep := len(bytes.TrimSpace(body[1:])) > 0
	for _, m := range members {
		if sep {
			out = append(out, ',')
		}
		out = append(out, m...)
		sep = true
	}
	return append(out, '}')
}
