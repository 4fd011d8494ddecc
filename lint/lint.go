// Package lint checks recorded MCP traffic against the protocol: what a
// session did that the spec forbids or advises against, such as a
// response to an id nobody sent, progress that goes backwards, a
// notification for a capability nobody declared, or a tool result that
// ignores its own outputSchema. It is Wireshark's expert info for MCP.
//
// It reads sessions as the cassette holds them and never changes them. It
// judges only what the recording shows: a message the recorder never saw
// (a 202 to a notification, a GET stream it did not carry) cannot be
// checked, and a cut-down export (mcpspy export --filter) will show gaps a
// whole recording would not.
//
// Tape checks a whole cassette and Session one session alone. A caller
// that reads a cassette a session or a message at a time, or while it is
// recorded, checks each session with a Checker: from NewChecker, alone as
// Session does; from a Cassette, with the cassette's other sessions as
// Tape does.
package lint

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/store"
)

// Severity says how wrong a finding is.
type Severity uint8

const (
	// Info is worth knowing but breaks nothing the spec requires.
	Info Severity = iota
	// Warning goes against a SHOULD, or is very likely a bug.
	Warning
	// Error breaks a MUST of the spec or of JSON-RPC 2.0.
	Error
)

var severityNames = [...]string{"info", "warning", "error"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "unknown"
}

// ParseSeverity is the inverse of Severity.String.
func ParseSeverity(s string) (Severity, bool) {
	for i, n := range severityNames {
		if n == s {
			return Severity(i), true
		}
	}
	return 0, false
}

// Finding is one thing a session did against the protocol.
type Finding struct {
	Session string // the session's id ("s1")
	// Seq is the message the finding is about; 0 when it is about the
	// session as a whole (a handshake that never happened).
	Seq uint64
	// Related is another message involved, 0 if none: the request a late
	// response answers, the first use of a reused id.
	Related  uint64
	Rule     string
	Severity Severity
	Message  string
}

// String formats a finding as one line: "s1:7: error: … [rule]".
func (f Finding) String() string {
	where := f.Session
	if f.Seq != 0 {
		where = fmt.Sprintf("%s:%d", f.Session, f.Seq)
	}
	// The message quotes the peers (a method, a tool name): escaped, so
	// a finding is one line whatever they sent.
	return fmt.Sprintf("%s: %s: %s [%s]", where, f.Severity, termsafe.Line(f.Message), f.Rule)
}

// Options tune a check.
type Options struct {
	// Skip names rules not to report.
	Skip []string
}

// Session checks one recorded session. Findings come in seq order.
func Session(s *store.TapeSession, opts Options) []Finding {
	c := NewChecker(s.Info, opts)
	for _, m := range s.Messages {
		c.Add(m)
	}
	return c.Finish()
}

// Checker checks one session a message at a time, for callers that read
// a cassette in pieces (store.Reader.Messages) rather than whole.
type Checker struct{ c *checker }

// NewChecker starts checking a session alone; info is its session info as
// the cassette holds it (End nil while it is still being recorded).
// Cassette.Checker starts one that sees the cassette's other sessions.
func NewChecker(info store.SessionInfo, opts Options) *Checker {
	return &Checker{c: newChecker(info, opts)}
}

// Add checks the session's next message. Messages must come in seq order.
func (k *Checker) Add(m *store.Message) { k.c.message(m) }

// Finish runs the checks that need the whole session and returns every
// finding, in seq order. The Checker is done with.
func (k *Checker) Finish() []Finding {
	k.c.end()
	slices.SortStableFunc(k.c.out, func(a, b Finding) int { return cmp.Compare(a.Seq, b.Seq) })
	return k.c.out
}

// Tape checks every session of a cassette, in the cassette's order. The
// sessions see each other's multi round-trip requests: a 2026-07-28
// retry recorded in another session than its call (another connection) is
// judged against it, which Session alone cannot do (see Cassette); so is
// a sessionless client's cancellation of a request it sent on another
// connection.
func Tape(t *store.Tape, opts Options) []Finding {
	cas := NewCassette(opts)
	found := make([][]Finding, len(t.Sessions))
	for i := range t.Sessions {
		k := cas.Checker(t.Sessions[i].Info)
		for _, m := range t.Sessions[i].Messages {
			k.Add(m)
		}
		found[i] = k.Finish() // its state can go: one session's at a time
	}
	cas.whole = true
	var out []Finding
	for i, fs := range found {
		out = append(out, withRetries(fs, cas.Findings(t.Sessions[i].Info.ID))...)
	}
	return out
}
