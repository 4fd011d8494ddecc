package inspector

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/suggest"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
)

// The filter language (docs/INSPECTOR.md): terms separated by spaces must
// all hold; "!" before a term negates it.
//
//	method:tools/call   method name; "*" matches any run of characters
//	tool:echo           tool name of a tools/call and of its response
//	dir:c2s  dir:s2c    direction
//	kind:error          request, response, notification, error, malformed, batch
//	                    (or the table's req, resp, notif, bad),
//	                    http (an HTTP error page: the table's kind column says so),
//	                    endpoint (a legacy HTTP+SSE stream's endpoint event, which
//	                    names the URI to POST to: kind sse in the table)
//	id:1  id:"1"        the id's JSON text (id:abc means id:"abc")
//	session:s2          session id or name
//	error               JSON-RPC errors, results with isError, HTTP error pages
//	                    (not malformed frames, nor endpoint events)
//	lint  lint:warning  messages with protocol findings (package lint): any,
//	                    of that severity or above, or of that rule
//	slow:>100ms         request/response latency (>, >=, <, <=; no operator: >=)
//	time:>=10:00:05     when mcpspy read it: a local clock time, on the
//	                    message's own day, or an RFC 3339 time (same operators)
//	status:404  4xx     the HTTP status recorded on the message (see statusTerm)
//	stream:get-sse      where it travelled over HTTP (store.HTTPMeta.Stream)
//	stream:6            which HTTP exchange or stream it travelled on
//	                    (store.HTTPMeta.StreamID: a POST and its answer, a
//	                    GET stream, a legacy SSE connection), as the F key
//	                    ("follow stream") writes it with the row's session
//	/regexp/            regular expression over the message JSON
//	text  "two words"   text in the message JSON; all lower case: any case
//
// Values of method, tool, dir, kind, id, session, lint, status and stream
// take alternatives with "|": kind:request|notification.
//
// A batch passes when one of its messages, as a message of its own, passes
// the terms on summaries, and its frame the others (Filter.match).

type termKind uint8

const (
	tMethod termKind = iota
	tTool
	tDir
	tKind
	tID
	tSession
	tError
	tSlow
	tRegexp
	tText
	tLint
	tStatus
	tStream
	tTime
)

// reads is what terms read of a message beyond its summary, each a pass
// over the records of the messages that the other terms let through.
type reads uint8

const (
	readsHTTP  reads = 1 << iota // the HTTP status and stream
	readsMeta                    // the whole HTTP metadata: the stream's id
	readsFrame                   // the frame
)

// reads says what the term reads beyond the summary (0: nothing).
func (t *term) reads() reads {
	switch t.kind {
	case tStream:
		if len(t.streamIDs) > 0 {
			// The id is not in store.HTTPBrief: the record is read whole.
			return readsMeta
		}
		return readsHTTP
	case tStatus:
		return readsHTTP
	case tText, tRegexp:
		return readsFrame
	}
	return 0
}

// msgData is what terms read of a message beyond its summary; zero what
// was not read.
type msgData struct {
	frame    []byte
	http     store.HTTPBrief
	streamID uint64 // read with readsMeta alone
}

type term struct {
	kind  termKind
	neg   bool
	vals  []string // alternatives
	dirs  [2]bool
	kinds [8]bool
	cmp   string // slow, time: ">", ">=", "<", "<="
	dur   time.Duration
	// time: at is Unix nanoseconds, or with clock nanoseconds since local
	// midnight, compared with each message's time of day.
	at    int64
	clock bool
	re    *regexp.Regexp
	text  []byte // lower-cased when fold
	fold  bool
	// lint: a finding matches at or above minSev, or when rules names its
	// rule; with neither (a bare "lint"), any finding matches.
	minSev lint.Severity
	anySev bool
	rules  map[string]bool
	// status: the alternatives as ranges of codes, [lo, hi].
	codes [][2]int
	// stream: the alternatives that are stream ids (stream:6); vals keeps
	// the names.
	streamIDs []uint64
	// pages: kind:http, HTTP error pages; endpoints: kind:endpoint,
	// legacy SSE endpoint events. Neither is a malformed message.
	pages, endpoints bool

	// strOK caches, per entry of Model.strs (method and tool names), whether
	// it matches; sessOK the same per session.
	strOK  []bool
	sessOK []bool
}

// Filter is a parsed filter expression.
type Filter struct {
	Text  string
	terms []term
}

// errFilterPrefix starts every filter error, which then names the term
// and says why it does not parse.
const errFilterPrefix = "filter"

// ParseFilter parses the filter language. An empty string matches all.
func ParseFilter(s string) (*Filter, error) {
	f := &Filter{Text: s}
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	for _, tok := range toks {
		t, err := parseTerm(tok)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", errFilterPrefix, tok, err)
		}
		f.terms = append(f.terms, t)
	}
	return f, nil
}

// tokenize splits on spaces outside double quotes; quotes stay in the
// tokens (id:"1" needs them).
func tokenize(s string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	inQuote := false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote = !inQuote
			cur.WriteRune(r)
		case !inQuote && (r == ' ' || r == '\t'):
			if cur.Len() > 0 {
				toks = append(toks, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if inQuote {
		return nil, fmt.Errorf("%s: %q: unclosed quote", errFilterPrefix, s)
	}
	if cur.Len() > 0 {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

var keys = "method, tool, dir, kind, id, session, slow, time, lint, status, stream"

// keyNames are keys, one by one, for suggestions.
var keyNames = strings.Split(keys, ", ")

func parseTerm(tok string) (term, error) {
	var t term
	if strings.HasPrefix(tok, "!") {
		t.neg = true
		tok = tok[1:]
		if tok == "" {
			return t, fmt.Errorf("! must be followed by a term to negate")
		}
	}
	if len(tok) >= 2 && tok[0] == '/' && tok[len(tok)-1] == '/' {
		re, err := regexp.Compile(tok[1 : len(tok)-1])
		if err != nil {
			return t, fmt.Errorf("bad regexp: %v", err)
		}
		t.kind, t.re = tRegexp, re
		return t, nil
	}
	if tok == "error" {
		t.kind = tError
		return t, nil
	}
	if tok == "lint" {
		t.kind = tLint
		t.anySev = true
		return t, nil
	}
	key, val, found := strings.Cut(tok, ":")
	if !found || tok[0] == '"' || strings.ContainsAny(key, `"/{}[],`) {
		return textTerm(t, tok), nil
	}
	if !slices.Contains(keyNames, key) {
		// Before the value's checks: "Echo:", text that was meant, said
		// that Echo needed a value, as if Echo were a key.
		return t, fmt.Errorf("unknown key %q (want %s; quote text to search for it)%s", key, keys, suggest.DidYouMean(key, keyNames, "%s"))
	}
	alts := strings.Split(val, "|")
	if val == "" {
		return t, fmt.Errorf("%s: needs a value", key)
	}
	if key != "slow" && key != "time" && slices.Contains(alts, "") {
		// "method:a|" would also select what has no method at all.
		return t, fmt.Errorf("%s: an empty alternative in %q (write a|b)", key, val)
	}
	t.vals = alts
	switch key {
	case "method":
		t.kind = tMethod
	case "tool":
		t.kind = tTool
	case "session":
		t.kind = tSession
	case "id":
		t.kind = tID
		for i, v := range alts {
			if !strings.HasPrefix(v, `"`) && !isNumber(v) {
				alts[i] = `"` + v + `"`
			}
		}
	case "dir":
		t.kind = tDir
		for _, v := range alts {
			d, ok := store.ParseDir(v)
			if !ok {
				return t, fmt.Errorf("dir must be c2s or s2c, not %q", v)
			}
			t.dirs[d] = true
		}
	case "kind":
		t.kind = tKind
		for _, v := range alts {
			switch v {
			case "http":
				t.pages = true
				continue
			case "endpoint":
				t.endpoints = true
				continue
			case "sse":
				// The table's word for an endpoint event; as a filter it
				// would read as every message that came over SSE.
				return t, fmt.Errorf("unknown kind %q (the table's sse rows are endpoint events: kind:endpoint; what came on an event stream: stream:legacy-sse|get-sse|post-sse)", v)
			}
			k, ok := jsonrpc.ParseKind(v)
			if !ok {
				// The table's own words (req, resp, notif, bad) are what a
				// user reads off the kind column and types back.
				k, ok = kindFromShort(v)
			}
			if !ok {
				return t, fmt.Errorf("unknown kind %q (want request, response, notification, error, malformed, batch, http or endpoint; req, resp, notif and bad as the table writes them)", v)
			}
			t.kinds[k] = true
		}
	case "lint":
		if err := lintTerm(&t, alts); err != nil {
			return t, err
		}
	case "status":
		if err := statusTerm(&t, alts); err != nil {
			return t, err
		}
	case "stream":
		if err := streamTerm(&t, alts); err != nil {
			return t, err
		}
	case "slow":
		t.kind = tSlow
		var v string
		t.cmp, v = cutComparison(val)
		d, err := time.ParseDuration(v)
		if err != nil {
			return t, fmt.Errorf("slow needs a duration like >100ms: %v", err)
		}
		if d < 0 {
			return t, fmt.Errorf("slow needs a duration like >100ms, not a negative one: %s", v)
		}
		t.dur = d
	case "time":
		t.kind = tTime
		var v string
		t.cmp, v = cutComparison(val)
		if err := timeTerm(&t, v); err != nil {
			return t, err
		}
	default:
		panic("filter key " + key + " is in keyNames but has no case")
	}
	return t, nil
}

// cutComparison splits the operator off a slow: or time: value; none
// means ">=".
func cutComparison(v string) (op, rest string) {
	for _, op := range []string{">=", "<=", ">", "<"} {
		if strings.HasPrefix(v, op) {
			return op, v[len(op):]
		}
	}
	return ">=", v
}

// compare applies a slow: or time: operator.
func compare(op string, a, b int64) bool {
	switch op {
	case ">":
		return a > b
	case "<":
		return a < b
	case "<=":
		return a <= b
	}
	return a >= b
}

// timeTerm reads a time: value: a clock time as show and the table print
// it (local, 10:00:05.250, or 10:00), judged on each message's own day,
// or an RFC 3339 time (2026-11-21T10:00:05Z; without a zone, local).
func timeTerm(t *term, v string) error {
	for _, layout := range []string{"15:04:05.999999999", "15:04"} {
		if c, err := time.Parse(layout, v); err == nil {
			t.clock = true
			t.at = int64(c.Hour())*int64(time.Hour) + int64(c.Minute())*int64(time.Minute) +
				int64(c.Second())*int64(time.Second) + int64(c.Nanosecond())
			return nil
		}
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		var local error
		if at, local = time.ParseInLocation("2006-01-02T15:04:05.999999999", v, time.Local); local != nil {
			return fmt.Errorf("time needs a clock time like >=10:00:05.250 or an RFC 3339 time like <2026-11-21T10:00:05Z, not %q", v)
		}
	}
	t.at = at.UnixNano()
	return nil
}

// kindFromShort reads the kind column's abbreviations (kindShort) back.
func kindFromShort(s string) (jsonrpc.Kind, bool) {
	for _, k := range []jsonrpc.Kind{jsonrpc.Request, jsonrpc.Response, jsonrpc.Notification, jsonrpc.Malformed} {
		if kindShort(k) == s {
			return k, true
		}
	}
	return 0, false
}

// lintTerm fills a lint: term: each alternative is a severity (that one
// or above) or a rule's name.
func lintTerm(t *term, alts []string) error {
	t.kind = tLint
	t.minSev = lint.Error + 1 // above every severity until one is named
	for _, v := range alts {
		if sev, ok := lint.ParseSeverity(v); ok {
			t.minSev = min(t.minSev, sev)
			continue
		}
		if !lint.KnownRule(v) {
			return fmt.Errorf("unknown lint rule or severity %q (want error, warning, info or a rule: mcpspy lint --rules lists them)", v)
		}
		if t.rules == nil {
			t.rules = map[string]bool{}
		}
		t.rules[v] = true
	}
	return nil
}

// statusTerm fills a status: term: each alternative is a status (404)
// or a class (4xx). A message's status is the one recorded on it: a
// server message's is that of the response it came in; a client
// message's, that of an answer to its POST that carried no message (a
// 202, a bare 4xx or 5xx), since no other message holds it. A message
// without one (stdio, or a request answered on an event stream or a JSON
// body, whose answer has it) matches no status: term.
func statusTerm(t *term, alts []string) error {
	t.kind = tStatus
	for _, v := range alts {
		fits := len(v) == 3 && v[0] >= '1' && v[0] <= '5'
		code, err := strconv.Atoi(v)
		switch {
		case fits && strings.EqualFold(v[1:], "xx"):
			lo := int(v[0]-'0') * 100
			t.codes = append(t.codes, [2]int{lo, lo + 99})
		case fits && err == nil:
			t.codes = append(t.codes, [2]int{code, code})
		default:
			return fmt.Errorf("status must be an HTTP status from 100 to 599 (404) or a class from 1xx to 5xx, not %q", v)
		}
	}
	return nil
}

// streams are the stream: values, store.HTTPMeta.Stream's names.
var streams = store.Streams()

// streamTerm fills a stream: term: each alternative is a stream's kind
// (get-sse) or a stream's id (6: one exchange or stream, the id the
// recorder gave it, as show --http prints it after the kind, post-sse#6).
func streamTerm(t *term, alts []string) error {
	t.kind = tStream
	t.vals = nil
	for _, v := range alts {
		if slices.Contains(streams, v) {
			t.vals = append(t.vals, v)
			continue
		}
		if v[0] >= '0' && v[0] <= '9' {
			id, err := strconv.ParseUint(v, 10, 64)
			if err != nil || id == 0 {
				return fmt.Errorf("a stream id is a number from 1, as show --http prints it after the kind (post-sse#6 is stream:6), not %q", v)
			}
			t.streamIDs = append(t.streamIDs, id)
			continue
		}
		last := len(streams) - 1
		return fmt.Errorf("unknown stream %q (want %s or %s, or a stream id: stream:6)", v, strings.Join(streams[:last], ", "), streams[last])
	}
	return nil
}

// matchesFinding says whether a lint term takes finding f.
func (t *term) matchesFinding(f lint.Finding) bool {
	return t.anySev || f.Severity >= t.minSev || t.rules[f.Rule]
}

func textTerm(t term, tok string) term {
	if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' {
		tok = tok[1 : len(tok)-1]
	}
	t.kind = tText
	t.fold = tok == strings.ToLower(tok)
	t.text = []byte(tok)
	return t
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r >= '0' && r <= '9' || r == '-' && i == 0 || r == '.' || r == 'e' || r == 'E' || r == '+') {
			return false
		}
	}
	return true
}

// NeedsBody says whether matching reads more of the messages than their
// summaries (frames, HTTP metadata), which costs a pass over the
// cassette's records.
func (f *Filter) NeedsBody() bool { return f.reads() != 0 }

// reads says what the filter's terms read beyond the summaries.
func (f *Filter) reads() reads {
	var r reads
	if f != nil {
		for i := range f.terms {
			r |= f.terms[i].reads()
		}
	}
	return r
}

// needsLint says whether matching needs the findings of the sessions
// matched, which are computed on first need.
func (f *Filter) needsLint() bool {
	if f == nil {
		return false
	}
	for i := range f.terms {
		if f.terms[i].kind == tLint {
			return true
		}
	}
	return false
}

// Sessions is every session id or name the filter's session terms name,
// negated or not, in the order written: a command that reads a file
// checks them against it, as it does --session, since a name that no
// session answers to is a typo that would otherwise select nothing.
func (f *Filter) Sessions() []string {
	if f == nil {
		return nil
	}
	var names []string
	for _, t := range f.terms {
		if t.kind == tSession {
			names = append(names, t.vals...)
		}
	}
	return names
}

// Empty says whether the filter matches everything.
func (f *Filter) Empty() bool { return f == nil || len(f.terms) == 0 }

// prepare refreshes the per-string and per-session caches.
func (f *Filter) prepare(m *Model) {
	for i := range f.terms {
		t := &f.terms[i]
		switch t.kind {
		case tMethod, tTool:
			for len(t.strOK) < len(m.strs) {
				s := m.strs[len(t.strOK)]
				ok := false
				for _, v := range t.vals {
					ok = ok || s != "" && glob(v, s)
				}
				t.strOK = append(t.strOK, ok)
			}
		case tSession:
			for len(t.sessOK) < len(m.Sessions) {
				info := &m.Sessions[len(t.sessOK)].Info
				ok := false
				for _, v := range t.vals {
					ok = ok || v == info.ID || v == info.Name
				}
				t.sessOK = append(t.sessOK, ok)
			}
		}
	}
}

// match reports whether row idx passes. in holds what the filter reads
// beyond the summary, zero when it reads nothing. A batch goes to
// matchBatch; any other row costs what it did before batches were.
func (f *Filter) match(m *Model, idx int32, in *msgData) bool {
	r := &m.rows[idx]
	if r.kind == jsonrpc.Batch && m.batches != nil {
		return f.matchBatch(m, idx, in)
	}
	for i := range f.terms {
		t := &f.terms[i]
		if t.eval(m, r, in) == t.neg {
			return false
		}
	}
	return true
}

// matchReading reports whether row idx passes the terms that read exactly
// what (0: the summary alone); the others are not evaluated.
func (f *Filter) matchReading(m *Model, idx int32, what reads, in *msgData) bool {
	r := &m.rows[idx]
	if what == 0 && r.kind == jsonrpc.Batch && m.batches != nil {
		return f.anyElem(m, idx, in)
	}
	return f.matchRowReading(m, r, what, in)
}

// matchBatch is match for batch row idx. A batch whose elements are known
// passes when one of its elements passes the terms on summaries, judged
// as a message of its own, and the batch's frame passes the others
// (status, stream, text, regexp).
func (f *Filter) matchBatch(m *Model, idx int32, in *msgData) bool {
	r := &m.rows[idx]
	return f.anyElem(m, idx, in) && f.matchRowReading(m, r, readsHTTP, in) && f.matchRowReading(m, r, readsMeta, in) &&
		f.matchRowReading(m, r, readsFrame, in)
}

// anyElem says whether one element of batch row idx passes the terms on
// summaries; a batch whose elements are not known is judged as a row.
func (f *Filter) anyElem(m *Model, idx int32, in *msgData) bool {
	els := m.elemsOf(idx)
	if len(els) == 0 {
		return f.matchRowReading(m, &m.rows[idx], 0, in)
	}
	for i := range els {
		if f.matchRowReading(m, &els[i], 0, in) {
			return true
		}
	}
	return false
}

// matchRowReading reports whether r, a row or a batch's element, passes
// the terms that read exactly what.
func (f *Filter) matchRowReading(m *Model, r *row, what reads, in *msgData) bool {
	for i := range f.terms {
		t := &f.terms[i]
		if t.reads() == what && t.eval(m, r, in) == t.neg {
			return false
		}
	}
	return true
}

func (t *term) eval(m *Model, r *row, in *msgData) bool {
	switch t.kind {
	case tMethod:
		return t.strOK[r.method]
	case tTool:
		return t.strOK[r.tool]
	case tDir:
		return t.dirs[r.dir&1]
	case tKind:
		switch r.role {
		case rolePage:
			return t.pages
		case roleEndpoint:
			return t.endpoints
		}
		// A batch's element is of its own kind and of the batch's.
		return int(r.kind) < len(t.kinds) && t.kinds[r.kind] || r.elem && t.kinds[jsonrpc.Batch]
	case tID:
		id := m.ids[r.idOff : r.idOff+uint32(r.idLen)]
		for _, v := range t.vals {
			if string(id) == v {
				return true
			}
		}
		return false
	case tSession:
		return t.sessOK[r.sess]
	case tError:
		return countsAsError(r)
	case tSlow:
		if r.pair < 0 {
			return false
		}
		return compare(t.cmp, int64(m.latency(r)), int64(t.dur))
	case tTime:
		at := r.time
		if t.clock {
			lt := time.Unix(0, at).Local()
			y, mo, d := lt.Date()
			at = lt.Sub(time.Date(y, mo, d, 0, 0, 0, 0, time.Local)).Nanoseconds()
		}
		return compare(t.cmp, at, t.at)
	case tLint:
		for _, f := range m.findingsAt(r.sess, r.seq) {
			if t.matchesFinding(f) {
				return true
			}
		}
		return false
	case tStatus:
		for _, c := range t.codes {
			if in.http.Status >= c[0] && in.http.Status <= c[1] {
				return true
			}
		}
		return false
	case tStream:
		return slices.Contains(t.vals, in.http.Stream) || in.streamID != 0 && slices.Contains(t.streamIDs, in.streamID)
	case tRegexp:
		return t.re.Match(in.frame)
	case tText:
		if t.fold {
			return indexFold(in.frame, t.text) >= 0
		}
		return bytes.Contains(in.frame, t.text)
	}
	return false
}

// glob matches s against a pattern where "*" stands for any run.
func glob(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// indexFold finds lower-case ASCII sub in s ignoring ASCII case. It looks
// for the first byte in both cases with IndexByte, which is fast, and
// remembers where each case occurs next so no byte is scanned twice.
func indexFold(s, sub []byte) int {
	if len(sub) == 0 {
		return 0
	}
	lo, up := sub[0], sub[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -2, -2
	for i := 0; i+len(sub) <= len(s); {
		if nextLo != -1 && nextLo < i {
			if j := bytes.IndexByte(s[i:], lo); j >= 0 {
				nextLo = i + j
			} else {
				nextLo = -1
			}
		}
		if up == lo {
			nextUp = nextLo
		} else if nextUp != -1 && nextUp < i {
			if j := bytes.IndexByte(s[i:], up); j >= 0 {
				nextUp = i + j
			} else {
				nextUp = -1
			}
		}
		c := nextLo
		if c < 0 || nextUp >= 0 && nextUp < c {
			c = nextUp
		}
		if c < 0 || c+len(sub) > len(s) {
			return -1
		}
		if equalFoldASCII(s[c+1:c+len(sub)], sub[1:]) {
			return c
		}
		i = c + 1
	}
	return -1
}

func equalFoldASCII(a, lower []byte) bool {
	for i, c := range a {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// Unheard says, for a filter that matched nothing, which of the method:
// and tool: names it asks for no message in m has, each with the nearest
// name one has: `no message has tool "ecoh" (did you mean echo?)`. A typo
// in a name is the usual reason a filter matches nothing, and nothing
// else says so. It is "" when every such name is there (a glob counts as
// there: it names no one name).
func (f *Filter) Unheard(m *Model) string {
	names := func(set map[uint32]bool) []string {
		var out []string
		for i := range set {
			if m.strs[i] != "" {
				out = append(out, m.strs[i])
			}
		}
		slices.Sort(out)
		return out
	}
	var notes []string
	var methods, tools map[uint32]bool // what the messages have, read once
	for i := range f.terms {
		t := &f.terms[i]
		if t.neg || (t.kind != tMethod && t.kind != tTool) {
			continue
		}
		if methods == nil {
			methods, tools = map[uint32]bool{}, map[uint32]bool{}
			for _, rows := range [][]row{m.rows, m.elems} {
				for j := range rows {
					methods[rows[j].method], tools[rows[j].tool] = true, true
				}
			}
		}
		what, set := "method", methods
		if t.kind == tTool {
			what, set = "tool", tools
		}
		known := names(set)
		for _, v := range t.vals {
			if !strings.Contains(v, "*") && !slices.Contains(known, v) {
				note := fmt.Sprintf("no message has %s %q", what, v)
				if near := suggest.Nearest(v, known); near != "" {
					note += fmt.Sprintf(" (did you mean %s?)", near)
				}
				notes = append(notes, note)
			}
		}
	}
	return strings.Join(notes, "; ")
}
