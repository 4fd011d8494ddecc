package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// What a session holds beside its requests and answers that a comparison
// of two runs still has to tell: the progress a server reported during a
// call, and frames that are no JSON-RPC message at all (a banner or a log
// line on stdout). mcpspy diff and rerun both tell them; they are read
// here, once.

// CallProgress is the progress a server reported for one request that
// asked for it (params._meta.progressToken).
type CallProgress struct {
	Seq   uint64 // the request's
	ID    string // the request's id (jsonrpc.CanonicalIDString)
	Token string // its progressToken (jsonrpc.CanonicalID)
	What  string // method and id, for messages: "tools/call (id 6)"
	// Params holds the params of each notifications/progress the server
	// sent with the request's token, in the order they were recorded.
	Params []json.RawMessage
}

// ProgressOf lists the client's requests in s that asked for progress, in
// the order they were sent, each with the progress notifications the
// server sent with its token. A token a later request sets again is that
// request's from then on: a client may reuse one once a call is done.
// Timing is not kept: it differs from run to run, always.
func ProgressOf(s *store.TapeSession) []CallProgress {
	var out []CallProgress
	latest := map[string]int{} // token → index in out of the request that set it last
	for _, m := range store.Unbatched(s.Messages) {
		var f struct {
			Params struct {
				ProgressToken json.RawMessage `json:"progressToken"`
				Meta          struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		sum := jsonrpc.Classify(m.Frame)
		switch {
		case m.Dir == store.C2S && sum.Kind == jsonrpc.Request:
			if json.Unmarshal(m.Frame, &f) != nil || len(f.Params.Meta.ProgressToken) == 0 {
				continue
			}
			token := string(jsonrpc.CanonicalID(bytes.TrimSpace(f.Params.Meta.ProgressToken)))
			latest[token] = len(out)
			out = append(out, CallProgress{Seq: m.Seq, ID: jsonrpc.CanonicalIDString(sum.ID), Token: token,
				What: fmt.Sprintf("%s (id %s)", sum.Method, sum.ID)})
		case m.Dir == store.S2C && sum.Kind == jsonrpc.Notification && sum.Method == "notifications/progress":
			var p struct {
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(m.Frame, &f) != nil || len(f.Params.ProgressToken) == 0 || json.Unmarshal(m.Frame, &p) != nil {
				continue
			}
			if i, ok := latest[string(jsonrpc.CanonicalID(bytes.TrimSpace(f.Params.ProgressToken)))]; ok {
				out[i].Params = append(out[i].Params, p.Params)
			}
		}
	}
	return out
}

// NotMessages lists the frames of s sent in dir that are no JSON-RPC
// message, one line each ("seq 1: invalid JSON: \"starting v2\"", the
// frame cut to 80 characters), but for the bodies of HTTP refusals: an
// error page is the refused request's answer, told with it.
func NotMessages(s *store.TapeSession, dir store.Dir) []string {
	var out []string
	for _, m := range s.Messages {
		if m.Dir != dir || m.HTTP.RefusalBody() {
			continue
		}
		if sum := jsonrpc.Classify(m.Frame); sum.Kind == jsonrpc.Malformed {
			out = append(out, fmt.Sprintf("seq %d: %s: %.80q", m.Seq, sum.Reason, m.Frame))
		}
	}
	return out
}

// progressVolatile is what a progress notification's params carry that
// is the client's, not the server's: the token, made afresh each run.
var progressVolatile = []string{"progressToken"}

// noProgress is what a call's progress leaves stand against when the
// other side's server reported progress for it and this side's did not.
var noProgress = leaf{path: "progress", value: []byte("(none)")}

// progressLeaves flattens the params of a call's progress notifications
// as CompareSessionsWith compares them: with ProgressLast the last one's,
// named progress.last.…; with ProgressSteps their count (progress.count)
// and each one's (progress[0].…). The token is left out, and members
// named in opts.Ignore are blanked. nil when none came, or progress is
// not compared.
func progressLeaves(params []json.RawMessage, opts CompareOptions) []leaf {
	if len(params) == 0 || opts.Progress == ProgressNotCompared {
		return nil
	}
	flat := func(root string, p json.RawMessage) []leaf {
		p = blankMembers(trimWS(p), opts.Ignore)
		c := canonizer{b: p, top: progressVolatile}
		canon, end, ok := c.value(nil, 0, 0, 0)
		if !ok || end != len(p) {
			canon = p
		}
		if len(canon) == 0 {
			return []leaf{{path: root, value: emptyObject}}
		}
		return flattenAt(root, canon)
	}
	if opts.Progress == ProgressLast {
		return flat("progress.last", params[len(params)-1])
	}
	out := []leaf{{path: "progress.count", value: fmt.Append(nil, len(params))}}
	for i, p := range params {
		out = append(out, flat(fmt.Sprintf("progress[%d]", i), p)...)
	}
	slices.SortFunc(out, compareLeaves)
	return out
}

// withProgress is c's answer leaves and its progress leaves, sorted, as
// they stand against other's: progress=(none) when only other's server
// reported progress.
func withProgress(c, other compared) []leaf {
	switch {
	case len(c.progressLeaves) > 0:
		all := slices.Concat(c.answer, c.progressLeaves)
		slices.SortFunc(all, compareLeaves)
		return all
	case len(other.progressLeaves) > 0:
		all := slices.Concat(c.answer, []leaf{noProgress})
		slices.SortFunc(all, compareLeaves)
		return all
	}
	return c.answer
}
