package replay

import (
	"cmp"
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
	// "+" B's, at most six, then "… N more" (N is Cut).
	Detail string
	// Cut counts the differing leaves Detail leaves out; AllLeaves then
	// shows them all ("" when Detail cut none).
	Cut       int
	AllLeaves string
	// IndexA and IndexB are the request's place among its side's
	// requests, from 1 (0: absent): what a move (Moved) is told by.
	IndexA, IndexB int
	// Moved says that the request, made on both sides, stands elsewhere
	// among the other requests on one than on the other: a host that
	// called tools in parallel, whose calls went out in another order.
	// Replay matches by method and params, not by order, so it is paired
	// and its answers compared all the same; only the order differs.
	Moved bool
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
	// progress holds the params of the progress notifications the server
	// sent for the request (ProgressOf), and progressLeaves them
	// flattened as CompareSessionsWith compares them (nil: none came).
	progress       []json.RawMessage
	progressLeaves []leaf
}

// CompareSessions lines up the requests of two recorded sessions (longest
// common subsequence of their match keys) and compares the answers of the
// requests both made. A request both made but in another place among the
// others (left over by the subsequence on both sides) is paired as replay
// would pair it, by its key, the n-th left over on one side with the n-th
// on the other, and marked Moved. The result lists every request of
// both, in A's order, with B's requests made only by B where they fall
// among the ones both made in order, and a moved request at its place in
// A.
// Client notifications and server-initiated messages are not compared.
// A request refused over HTTP without a JSON-RPC answer counts as
// answered "(refused: HTTP <status>)".
// Members named in ignore (at any depth, in requests and answers alike)
// are left out: values that change from run to run.
func CompareSessions(a, b *store.TapeSession, ignore ...string) []Difference {
	return CompareSessionsWith(a, b, CompareOptions{Ignore: ignore})
}

// CompareOptions says what a comparison leaves out and how it compares
// the progress a server reported during a call.
type CompareOptions struct {
	// Ignore names members left out (at any depth, in requests, answers
	// and progress notifications alike): values that change from run to
	// run.
	Ignore []string
	// Progress says how each call's progress is compared: not at all
	// (the zero value, as CompareSessions does), by whether any came and
	// the last one, or by every one.
	Progress ProgressMode
}

// ProgressMode says how a comparison compares the progress notifications
// a server sent for a call.
type ProgressMode byte

// Progress modes.
const (
	ProgressNotCompared ProgressMode = iota
	// ProgressLast compares whether any came and the last one's params.
	// A server that reports progress as time passes (every 100ms) sends
	// another count each run, and its last step says it got there.
	ProgressLast
	// ProgressSteps compares how many came and each one's params, in
	// order: for a server whose steps are its work's, not the clock's.
	ProgressSteps
)

// CompareSessionsWith is CompareSessions with options.
//
// With opts.Progress, each call both sides made is compared, besides by
// its answer, by the progress the server reported for it (the
// notifications/progress with its _meta.progressToken, ProgressOf): with
// ProgressLast, whether any came and the last one's params but for the
// token (progress, total, message), as leaves named progress.last.…;
// with ProgressSteps, their count (progress.count) and each one's params
// (progress[0].…). A call with progress on one side only stands against
// progress=(none). A difference counts as AnswerDiffs. When they came is
// never compared: it is not the same twice.
func CompareSessionsWith(a, b *store.TapeSession, opts CompareOptions) []Difference {
	ra, rb := comparedBoth(a, b, opts)
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
	return CompareClientsWith(a, b, CompareOptions{Ignore: ignore})
}

// CompareClientsWith is CompareClients with options, which it takes as
// CompareSessionsWith does.
func CompareClientsWith(a, b []*store.TapeSession, opts CompareOptions) []Difference {
	ra, rb := comparedAll(a, b, opts)
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
	inOrder := commonSubsequence(ka, kb)
	// partner[i] is the index in rb paired with ra[i] (-1: none), and
	// partnerB the other way round.
	partner, partnerB := make([]int, len(ra)), make([]int, len(rb))
	for i := range partner {
		partner[i] = -1
	}
	for j := range partnerB {
		partnerB[j] = -1
	}
	for _, p := range inOrder {
		partner[p[0]], partnerB[p[1]] = p[1], p[0]
	}
	if pairMoved(ka, kb, partner, partnerB) {
		inOrder = longestInOrder(partner)
	}
	pair := func(i, j int, moved bool) Difference {
		x, y := ra[i], rb[j]
		d := Difference{Op: Same, Request: describe(x.method, x.canon), SeqA: x.seq, SeqB: y.seq,
			SessionA: namedSession(x, named), SessionB: namedSession(y, named), IndexA: i + 1, IndexB: j + 1, Moved: moved}
		if minus, plus := leafDiff(withProgress(x, y), withProgress(y, x)); len(minus)+len(plus) > 0 {
			d.Op, d.Detail = AnswerDiffs, formatDiff(minus, plus)
			if d.Cut = len(minus) + len(plus) - shownLeaves; d.Cut > 0 {
				d.AllLeaves = everyLeaf(minus, plus)
			} else {
				d.Cut = 0
			}
		}
		return d
	}
	var out []Difference
	i, j := 0, 0
	emit := func(upToA, upToB int) {
		for ; i < upToA; i++ {
			if partner[i] >= 0 {
				out = append(out, pair(i, partner[i], true))
				continue
			}
			out = append(out, Difference{Op: OnlyInA, Request: describe(ra[i].method, ra[i].canon), SeqA: ra[i].seq,
				SessionA: namedSession(ra[i], named), IndexA: i + 1})
		}
		for ; j < upToB; j++ {
			if partnerB[j] >= 0 {
				continue // moved: listed at its place in A
			}
			out = append(out, Difference{Op: OnlyInB, Request: describe(rb[j].method, rb[j].canon), SeqB: rb[j].seq,
				SessionB: namedSession(rb[j], named), IndexB: j + 1})
		}
	}
	for _, p := range inOrder {
		emit(p[0], p[1])
		out = append(out, pair(p[0], p[1], false))
		i, j = i+1, j+1
	}
	emit(len(ra), len(rb))
	return out
}

// pairMoved pairs the requests the common subsequence left over on both
// sides (partner, partnerB: -1) by key, as replay answers repeated
// identical requests: the n-th left over in a with the n-th in b. Then,
// for each key it paired any of, it pairs all of that key's paired
// requests afresh in order, so that the first such call in a goes with
// the first in b, whichever of them the subsequence had taken. It
// reports whether it paired any.
func pairMoved(ka, kb []string, partner, partnerB []int) bool {
	left := map[string][]int{} // key → b's left-over indexes, in order
	for j, k := range kb {
		if partnerB[j] < 0 {
			left[k] = append(left[k], j)
		}
	}
	movedKeys := map[string]bool{}
	for i, k := range ka {
		if partner[i] >= 0 || len(left[k]) == 0 {
			continue
		}
		j := left[k][0]
		left[k] = left[k][1:]
		partner[i], partnerB[j] = j, i
		movedKeys[k] = true
	}
	if len(movedKeys) == 0 {
		return false
	}
	as, bs := map[string][]int{}, map[string][]int{}
	for i, k := range ka {
		if partner[i] >= 0 && movedKeys[k] {
			as[k] = append(as[k], i)
		}
	}
	for j, k := range kb {
		if partnerB[j] >= 0 && movedKeys[k] {
			bs[k] = append(bs[k], j)
		}
	}
	for k := range movedKeys {
		for n, i := range as[k] {
			j := bs[k][n]
			partner[i], partnerB[j] = j, i
		}
	}
	return true
}

// longestInOrder is a longest chain of the pairs (i, partner[i]) whose
// b indexes rise with their a indexes (patience sorting, O(N log N)):
// the requests made in the same order on both sides, the others moved.
func longestInOrder(partner []int) [][2]int {
	var tails []int       // tails[n]: the a index ending the best chain of n+1 known
	prev := map[int]int{} // a index → the a index before it in its chain (-1: none)
	for i, j := range partner {
		if j < 0 {
			continue
		}
		n, _ := slices.BinarySearchFunc(tails, j, func(t, j int) int { return cmp.Compare(partner[t], j) })
		prev[i] = -1
		if n > 0 {
			prev[i] = tails[n-1]
		}
		if n == len(tails) {
			tails = append(tails, i)
		} else {
			tails[n] = i
		}
	}
	if len(tails) == 0 {
		return nil
	}
	chain := make([][2]int, len(tails))
	for n, i := len(tails)-1, tails[len(tails)-1]; n >= 0; n, i = n-1, prev[i] {
		chain[n] = [2]int{i, partner[i]}
	}
	return chain
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
func comparedBoth(a, b *store.TapeSession, opts CompareOptions) (ra, rb []compared) {
	return comparedAll([]*store.TapeSession{a}, []*store.TapeSession{b}, opts)
}

// comparedAll takes both sides' requests and answers, each side's merged
// in recorded order (mergeCompared), keyed and flattened. A value one side
// holds redacted (a shared export) compares equal to any value: the same
// members are blanked on both sides, as replay blanks a live request's.
func comparedAll(a, b []*store.TapeSession, opts CompareOptions) (ra, rb []compared) {
	withProgress := opts.Progress != ProgressNotCompared
	ra, rb = mergeCompared(a, withProgress), mergeCompared(b, withProgress)
	reqNames, ansNames := redactedNames{}, redactedNames{}
	for _, r := range slices.Concat(ra, rb) {
		reqNames.add(r.method, []byte(r.canon))
		ansNames.add(r.method, r.body)
	}
	for _, rs := range [][]compared{ra, rb} {
		for i := range rs {
			rs[i].finish(reqNames, ansNames, opts)
		}
	}
	return ra, rb
}

// mergeCompared takes the requests of sessions, each paired with its
// answer within its own session, in the order they were recorded: by
// time, then by the order of the sessions, then by seq; withProgress
// says to take each request's progress too (comparedRequests).
func mergeCompared(sessions []*store.TapeSession, withProgress bool) []compared {
	if len(sessions) == 1 {
		return comparedRequests(sessions[0], taskNamesOf(sessions[0]), withProgress)
	}
	var all []*store.Message
	for _, s := range sessions {
		all = append(all, s.Messages...)
	}
	slices.SortStableFunc(all, func(x, y *store.Message) int { return x.Time.Compare(y.Time) })
	tasks := taskNamesOf(&store.TapeSession{Messages: all})
	var out []compared
	for _, s := range sessions {
		out = append(out, comparedRequests(s, tasks, withProgress)...)
	}
	slices.SortStableFunc(out, func(x, y compared) int { return x.at.Compare(y.at) })
	return out
}

// comparedRequests takes a session's requests in order, each with its
// answer (paired by id), naming tasks as tasks does, and, withProgress,
// the progress the server reported for it.
func comparedRequests(s *store.TapeSession, tasks taskNames, withProgress bool) []compared {
	var out []compared
	// request seq and id (a batch's requests share a seq) → the progress
	// the server reported for it; read only when compared, as it costs
	// another pass over every frame.
	progress := map[string][]json.RawMessage{}
	if withProgress {
		for _, p := range ProgressOf(s) {
			progress[fmt.Sprint(p.Seq, " ", p.ID)] = p.Params
		}
	}
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
			c := compared{method: f.Method, session: s.Info.ID, seq: m.Seq, at: m.Time, params: f.Params,
				progress: progress[fmt.Sprint(m.Seq, " ", jsonrpc.CanonicalIDString(string(f.ID)))]}
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
func (c *compared) finish(reqNames, ansNames redactedNames, opts CompareOptions) {
	ignore := opts.Ignore
	c.progressLeaves = progressLeaves(c.progress, opts)
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
	if d.Moved {
		where += ", moved"
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

// shownLeaves is how many differing leaves formatDiff shows before it
// cuts the rest to "… N more".
const shownLeaves = 6

// everyLeaf is formatDiff uncut: every differing leaf, in its order (a
// whole value first, then A's leaves, then B's), for a reader who asked
// to see them all.
func everyLeaf(minus, plus []leaf) string {
	var lines []string
	for _, whole := range []bool{true, false} {
		for _, l := range minus {
			if (l.path == "") == whole {
				lines = append(lines, "- "+shownLeaf(l, plus))
			}
		}
		for _, l := range plus {
			if (l.path == "") == whole {
				lines = append(lines, "+ "+shownLeaf(l, minus))
			}
		}
	}
	return strings.Join(lines, "\n")
}
