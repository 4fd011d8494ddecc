package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// Comparing two recorded sessions in replay's terms: the requests a client
// made, as matching sees them (method and canonical params, volatile
// fields left out), and the answer each got. Two runs of the same host
// against two versions of a server, or a bug report against a local run,
// line up request by request; what differs is a request only one side
// made, or the same request answered differently.

// Op says how a request of one session stands in the other.
type Op byte

// Comparison ops.
const (
	Same        Op = '=' // the same request, the same answer
	AnswerDiffs Op = '~' // the same request, another answer
	OnlyInA     Op = '-'
	OnlyInB     Op = '+'
)

// Difference is one request in the comparison of two sessions.
type Difference struct {
	Op Op
	// Request is the method and canonical params, as reports print them.
	Request string
	// SeqA and SeqB are the request's seq in each session (0: absent).
	SeqA, SeqB uint64
	// SessionA and SessionB name the session each seq is in, when the
	// comparison merged a side's sessions (CompareClients); "" otherwise.
	SessionA, SessionB string
	// Detail shows, for AnswerDiffs, the answers' differing leaves: "-" A's,
	// "+" B's.
	Detail string
}

// compared is one request of a session and the answer it got.
type compared struct {
	key     string // method NUL canonical params: what lines the sessions up
	method  string
	canon   string
	session string // the session's id
	seq     uint64
	at      time.Time // when the request was recorded
	answer  []leaf    // the answer's leaves (result.… or error.…); nil: none
	// refused is the HTTP status a request was refused with, without a
	// JSON-RPC answer (0: it was not): the answer it got, as it were.
	refused int

	params json.RawMessage
	root   string          // "result" or "error"; "" when unanswered
	body   json.RawMessage // the answer's result or error
}

// CompareSessions lines up the requests of two recorded sessions (longest
// common subsequence of their match keys) and compares the answers of the
// requests both made. The result lists every request of both, in order.
// Client notifications and server-initiated messages are not compared.
// A request refused over HTTP without a JSON-RPC answer counts as
// answered "(refused: HTTP <status>)".
// Members named in ignore (at any depth, in requests and answers alike)
// are left out: values that change from run to run.
func CompareSessions(a, b *store.TapeSession, ignore ...string) []Difference {
	ra, rb := comparedBoth(a, b, ignore)
	return compare(ra, rb, false)
}

// CompareClients is CompareSessions for clients recorded as several
// sessions each: the connections of a sessionless 2026-07-28 HTTP client,
// which mcpspy records one session per connection and which split a run's
// requests differently each time. Each side's requests, paired with their
// answers within their own session (ids repeat across connections), are
// merged into one stream in the order they were recorded (ties: the order
// of the sessions as given, then seq) and the two streams compared as
// CompareSessions compares two sessions. Tasks are named by the order the
// whole side created them, as a task may be polled on another connection.
// Each Difference names the session of each seq (SessionA, SessionB).
func CompareClients(a, b []*store.TapeSession, ignore ...string) []Difference {
	ra, rb := comparedAll(a, b, ignore)
	return compare(ra, rb, true)
}

// compare lines up ra and rb and compares their answers; named says to
// name each seq's session.
func compare(ra, rb []compared, named bool) []Difference {
	ka, kb := make([]string, len(ra)), make([]string, len(rb))
	for i, r := range ra {
		ka[i] = r.key
	}
	for i, r := range rb {
		kb[i] = r.key
	}
	var out []Difference
	i, j := 0, 0
	emit := func(upToA, upToB int) {
		for ; i < upToA; i++ {
			out = append(out, Difference{Op: OnlyInA, Request: describe(ra[i].method, ra[i].canon), SeqA: ra[i].seq, SessionA: namedSession(ra[i], named)})
		}
		for ; j < upToB; j++ {
			out = append(out, Difference{Op: OnlyInB, Request: describe(rb[j].method, rb[j].canon), SeqB: rb[j].seq, SessionB: namedSession(rb[j], named)})
		}
	}
	for _, p := range commonSubsequence(ka, kb) {
		emit(p[0], p[1])
		x, y := ra[i], rb[j]
		d := Difference{Op: Same, Request: describe(x.method, x.canon), SeqA: x.seq, SeqB: y.seq,
			SessionA: namedSession(x, named), SessionB: namedSession(y, named)}
		if minus, plus := leafDiff(x.answer, y.answer); len(minus)+len(plus) > 0 {
			d.Op, d.Detail = AnswerDiffs, formatDiff(minus, plus)
		}
		out = append(out, d)
		i, j = i+1, j+1
	}
	emit(len(ra), len(rb))
	return out
}

// namedSession is the session a Difference names for c: its own when named.
func namedSession(c compared, named bool) string {
	if named {
		return c.session
	}
	return ""
}

// comparedBoth takes both sessions' requests and answers, keyed and
// flattened (comparedAll).
func comparedBoth(a, b *store.TapeSession, ignore []string) (ra, rb []compared) {
	return comparedAll([]*store.TapeSession{a}, []*store.TapeSession{b}, ignore)
}

// comparedAll takes both sides' requests and answers, each side's merged
// in recorded order (mergeCompared), keyed and flattened. A value one side
// holds redacted (a shared export) compares equal to any value: the same
// members are blanked on both sides, as replay blanks a live request's.
func comparedAll(a, b []*store.TapeSession, ignore []string) (ra, rb []compared) {
	ra, rb = mergeCompared(a), mergeCompared(b)
	reqNames, ansNames := redactedNames{}, redactedNames{}
	for _, r := range slices.Concat(ra, rb) {
		reqNames.add(r.method, []byte(r.canon))
		ansNames.add(r.method, r.body)
	}
	for _, rs := range [][]compared{ra, rb} {
		for i := range rs {
			rs[i].finish(reqNames, ansNames, ignore)
		}
	}
	return ra, rb
}

// mergeCompared takes the requests of sessions, each paired with its
// answer within its own session, in the order they were recorded: by
// time, then by the order of the sessions, then by seq.
func mergeCompared(sessions []*store.TapeSession) []compared {
	if len(sessions) == 1 {
		return comparedRequests(sessions[0], taskNamesOf(sessions[0]))
	}
	var all []*store.Message
	for _, s := range sessions {
		all = append(all, s.Messages...)
	}
	slices.SortStableFunc(all, func(x, y *store.Message) int { return x.Time.Compare(y.Time) })
	tasks := taskNamesOf(&store.TapeSession{Messages: all})
	var out []compared
	for _, s := range sessions {
		out = append(out, comparedRequests(s, tasks)...)
	}
	slices.SortStableFunc(out, func(x, y compared) int { return x.at.Compare(y.at) })
	return out
}

// comparedRequests takes a session's requests in order, each with its
// answer (paired by id), naming tasks as tasks does.
func comparedRequests(s *store.TapeSession, tasks taskNames) []compared {
	var out []compared
	// request id (jsonrpc.CanonicalID: an answer may write it another
	// way, "\u0031" for "1") → index in out
	open := map[string]int{}
	// A batch's requests and answers count one by one.
	for _, m := range store.Unbatched(s.Messages) {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m.Frame, &f) != nil || len(f.ID) == 0 || string(f.ID) == "null" {
			continue // notifications and malformed frames
		}
		switch {
		case m.Dir == store.C2S && f.Method != "":
			open[jsonrpc.CanonicalIDString(string(f.ID))] = len(out)
			f.Params = tasks.rename(f.Params)
			c := compared{method: f.Method, session: s.Info.ID, seq: m.Seq, at: m.Time, params: f.Params}
			if m.HTTP != nil && m.HTTP.Status >= 300 {
				c.refused = m.HTTP.Status
			}
			c.canonical(f.Params)
			out = append(out, c)
		case m.Dir == store.S2C && f.Method == "":
			id := jsonrpc.CanonicalIDString(string(f.ID))
			idx, ok := open[id]
			if !ok {
				continue
			}
			delete(open, id)
			out[idx].root, out[idx].body = "result", tasks.rename(f.Result)
			if len(f.Error) > 0 {
				out[idx].root, out[idx].body = "error", f.Error
			}
		}
	}
	return out
}

// canonical sets the request's canonical params and key from params.
func (c *compared) canonical(params json.RawMessage) {
	canon, ok := canonParams(c.method, params)
	if !ok {
		canon = string(params)
	}
	c.canon, c.key = canon, c.method+"\x00"+canon
}

// finish blanks what either side holds redacted, then flattens the answer.
func (c *compared) finish(reqNames, ansNames redactedNames, ignore []string) {
	if len(reqNames[c.method]) > 0 || len(ignore) > 0 {
		c.canonical(blankMembers(reqNames.blank(c.method, c.params), ignore))
	}
	if c.root == "" {
		c.answer = []leaf{{value: []byte("(no answer)")}}
		if c.refused != 0 {
			c.answer = []leaf{{value: fmt.Appendf(nil, "(refused: HTTP %d)", c.refused)}}
		}
		return
	}
	body := blankMembers(ansNames.blank(c.method, c.body), ignore)
	canon, ok := canonAnswer(c.method, body) // drops _meta's run-to-run keys, as for params
	if !ok {
		canon = body
	}
	if c.answer = flattenAt(c.root, canon); c.answer == nil {
		c.answer = []leaf{{path: c.root, value: emptyObject}}
	}
}

// commonSubsequence returns the index pairs of a longest common
// subsequence of a and b, in order (Myers' O((N+M)·D) algorithm: sessions
// that mostly agree cost little however long they are).
func commonSubsequence(a, b []string) [][2]int {
	n, m := len(a), len(b)
	// trace[d][k+d] is the furthest x reached on diagonal k after d edits.
	var trace [][]int
search:
	for d := 0; d <= n+m; d++ {
		cur := make([]int, 2*d+1)
		trace = append(trace, cur)
		for k := -d; k <= d; k += 2 {
			x := 0
			if d > 0 {
				pk, px := previous(trace[d-1], d, k)
				x = px
				if pk == k-1 {
					x++ // right: a line of a; else down: a line of b
				}
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			cur[k+d] = x
			if x >= n && y >= m {
				break search
			}
		}
	}
	var pairs [][2]int
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		k := x - y
		pk, px := previous(trace[d-1], d, k)
		sx := px // where this step's snake starts
		if pk == k-1 {
			sx = px + 1
		}
		for x > sx && y > sx-k {
			x, y = x-1, y-1
			pairs = append(pairs, [2]int{x, y})
		}
		x, y = px, px-pk
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		pairs = append(pairs, [2]int{x, y})
	}
	slices.Reverse(pairs)
	return pairs
}

// previous is the diagonal that step d reaches diagonal k from, and how
// far along it step d-1 got (prev is trace[d-1]): the search and the
// walk back must make the same choice.
func previous(prev []int, d, k int) (pk, px int) {
	if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
		pk = k + 1
	} else {
		pk = k - 1
	}
	return pk, prev[pk+d-1]
}

// String prints a difference as one line (and its detail under it).
func (d Difference) String() string {
	var where string
	switch d.Op {
	case OnlyInA:
		where = position("a", d.SessionA, d.SeqA)
	case OnlyInB:
		where = position("b", d.SessionB, d.SeqB)
	default:
		where = position("a", d.SessionA, d.SeqA) + " " + position("b", d.SessionB, d.SeqB)
	}
	s := fmt.Sprintf("%c %s  (%s)", d.Op, d.Request, where)
	if d.Detail != "" {
		s += "\n    " + strings.ReplaceAll(d.Detail, "\n", "\n    ")
	}
	return s
}

// position names a request of side ("a" or "b"): "a#7" in a comparison of
// two sessions, "a s3:7" (session:seq, as mcpspy show names a line of a
// cassette with several sessions) in one that merged a side's sessions.
func position(side, session string, seq uint64) string {
	if session == "" {
		return fmt.Sprintf("%s#%d", side, seq)
	}
	return fmt.Sprintf("%s %s:%d", side, session, seq)
}
