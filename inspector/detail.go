package inspector

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/store"
)

// Detail builds the detail pane for a message and, when it has them, the
// messages it pairs with (a batch's answers may be several): a heading,
// the HTTP metadata, the pretty JSON; then the same for each pair. A
// pair's Msg may be nil (it could not be read): its place is named but
// not shown. lint is what the pane says of the message's protocol
// findings, under its heading (none when it has none, or they were not
// computed).
func Detail(r Row, msg *store.Message, pairs []Paired, unfold bool, lint []Line) []Line {
	out := messageLines(r, msg, unfold, "")
	// Say where the pairs are, what the batch holds and what lint found
	// before the body pushes them off screen.
	var top []Line
	switch len(pairs) {
	case 0:
	case 1:
		p := pairs[0].Row
		top = append(top, Line{{Label, fmt.Sprintf("paired %s %s #%d below · p jumps to it", pairRole(r, p), p.Session, p.Seq)}})
	default:
		names := make([]string, len(pairs))
		for i, p := range pairs {
			names[i] = fmt.Sprintf("%s #%d", p.Row.Session, p.Row.Seq)
		}
		top = append(top, Line{{Label, fmt.Sprintf("paired with %s below · p jumps to each in turn", strings.Join(names, ", "))}})
	}
	top = append(top, cancelLines(r)...)
	top = append(top, elemLines(r)...)
	top = append(top, lint...)
	out = append(out[:2:2], append(top, out[2:]...)...)
	for _, p := range pairs {
		if p.Msg != nil {
			out = append(out, Line{})
			out = append(out, messageLines(p.Row, p.Msg, unfold, pairRole(r, p.Row))...)
		}
	}
	return out
}

// Paired is a message the detail pane shows below the one it pairs with,
// and the message as read (nil if it could not be).
type Paired struct {
	Row Row
	Msg *store.Message
}

// paired returns the messages r pairs with, as read from src: a Msg is
// nil when it could not be read, which Detail then only names.
func (m *Model) paired(r Row, src Source) []Paired {
	var out []Paired
	for _, idx := range r.Pairs() {
		if p, ok := m.ByIndex(idx); ok {
			msg, _ := src.Message(p.Ref)
			out = append(out, Paired{p, msg})
		}
	}
	return out
}

// pairRole is what p is to r: the cancel naming r (or a request in
// batch r), else the request when it came first.
func pairRole(r, p Row) string {
	cancels := func(kind jsonrpc.Kind, l *CancelLink) bool {
		return kind == jsonrpc.Request && l != nil && l.Index == p.Index
	}
	if cancels(r.Kind, r.Cancel) {
		return "cancel"
	}
	for _, e := range r.Batch {
		if cancels(e.Kind, e.Cancel) {
			return "cancel"
		}
	}
	if p.Index < r.Index {
		return "request"
	}
	return "response"
}

// cancelLines say what r's cancel link tells: that request r was
// cancelled, or which request cancel r names, and whether the request
// was answered all the same.
func cancelLines(r Row) []Line {
	l := r.Cancel
	if l == nil {
		return nil
	}
	text := fmt.Sprintf("cancels %s #%d, sent %s before", r.Session, l.Seq, durText(l.After))
	if r.Kind == jsonrpc.Request {
		text = fmt.Sprintf("cancelled by %s #%d, %s after", r.Session, l.Seq, durText(l.After))
	}
	return []Line{{{Label, text + " · " + l.answerText(r)}}}
}

// answerText says whether the request of link l, seen from r (the request
// or its cancel), was answered: not, anyway, or before the cancel came.
func (l *CancelLink) answerText(r Row) string {
	cancelSeq := r.Seq
	if r.Kind == jsonrpc.Request {
		cancelSeq = l.Seq
	}
	switch {
	case l.Answer == 0:
		return "no answer came"
	case l.Answer > cancelSeq:
		return fmt.Sprintf("answered anyway by %s #%d", r.Session, l.Answer)
	}
	return fmt.Sprintf("its answer %s #%d came first (they crossed)", r.Session, l.Answer)
}

// elemLines list a batch's messages, one line each, with what each pairs
// with: "2. request tools/call get-sum · id 3 · answer s1 #7 · 1.2ms".
func elemLines(r Row) []Line {
	out := make([]Line, 0, len(r.Batch))
	for i, e := range r.Batch {
		parts := []string{e.Kind.String()}
		if name := msgName(e.Kind, e.Method, e.Tool, e.IsError, e.ErrCode, e.InputRequired); name != "" {
			parts[0] += " " + termsafe.Line(name)
		}
		if e.ID != "" {
			parts = append(parts, "id "+termsafe.Line(e.ID))
		}
		switch {
		case e.Pair >= 0 && e.Kind == jsonrpc.Request:
			parts = append(parts, fmt.Sprintf("answer %s #%d", r.Session, e.PairSeq), durText(e.Latency))
		case e.Pair >= 0:
			parts = append(parts, fmt.Sprintf("request %s #%d", r.Session, e.PairSeq), durText(e.Latency))
		case e.Kind == jsonrpc.Request:
			parts = append(parts, "no answer")
		}
		switch {
		case e.Cancel != nil && e.Kind == jsonrpc.Request:
			parts = append(parts, fmt.Sprintf("cancelled by %s #%d", r.Session, e.Cancel.Seq))
		case e.Cancel != nil:
			parts = append(parts, fmt.Sprintf("cancels %s #%d", r.Session, e.Cancel.Seq))
		}
		class := Plain
		if e.IsError || e.Kind == jsonrpc.Error {
			class = Bad
		}
		out = append(out, Line{{Label, fmt.Sprintf("%d. ", i+1)}, {class, strings.Join(parts, " · ")}})
	}
	return out
}

func messageLines(r Row, msg *store.Message, unfold bool, role string) []Line {
	kind := r.Kind.String()
	switch { // as the table calls them, not malformed
	case r.PageStatus != 0:
		kind = "http"
	case r.Endpoint:
		kind = "sse"
	}
	head := fmt.Sprintf("%s #%d  %s  %s  %s", r.Session, r.Seq, dirArrow(r.Dir), kind, r.Time.UTC().Format("2006-01-02 15:04:05.000000"))
	if role != "" {
		head = "paired " + role + ": " + head
	}
	lines := []Line{{{Heading, head}}}
	facts := []string{sizeText(r.Size)}
	switch {
	case r.PageStatus != 0:
		facts = append(facts, pageName(r.PageStatus))
	case r.Endpoint:
		facts = append(facts, termsafe.Line(endpointName(r.EndpointURI)))
	}
	if r.Method != "" {
		facts = append(facts, termsafe.Line(r.Method))
	}
	if r.Batch != nil {
		facts = append(facts, termsafe.Line(batchNames(r.Batch)))
	}
	if r.Tool != "" {
		facts = append(facts, "tool "+termsafe.Line(r.Tool))
	}
	if r.ID != "" {
		facts = append(facts, "id "+termsafe.Line(r.ID))
	}
	if r.Pair >= 0 {
		facts = append(facts, "latency "+durText(r.Latency))
	}
	if r.IsError {
		e := "error"
		if r.ErrCode != 0 {
			e = fmt.Sprintf("error %d", r.ErrCode)
		}
		facts = append(facts, e)
	}
	lines = append(lines, Line{{Label, strings.Join(facts, " · ")}})
	if msg == nil {
		return append(lines, Line{{Bad, "(message could not be read)"}})
	}
	if msg.Note != "" {
		lines = append(lines, Line{{Label, "note: "}, {Plain, termsafe.Line(msg.Note)}})
	}
	if h := msg.HTTP; h != nil {
		lines = append(lines, httpLines(h)...)
	}
	return append(lines, Pretty(msg.Frame, unfold)...)
}

func httpLines(h *store.HTTPMeta) []Line {
	out := httpSummary(h)
	out = append(out, headerLines("> ", h.RequestHeader)...)
	out = append(out, headerLines("< ", h.ResponseHeader)...)
	return out
}

// httpSummary is the HTTP metadata without the headers: method, path,
// status and stream; the SSE event's id, type and retry; priming events.
func httpSummary(h *store.HTTPMeta) []Line {
	var out []Line
	first := strings.TrimSpace(strings.Join([]string{h.Method, h.Path}, " "))
	if h.Status != 0 {
		first += fmt.Sprintf(" → %d", h.Status)
	}
	if h.Stream != "" {
		first += "  stream " + h.Stream
		if h.StreamID != 0 {
			first += fmt.Sprintf("#%d", h.StreamID)
		}
	}
	if h.WSOpcode != 0 {
		first += fmt.Sprintf("  opcode %d", h.WSOpcode)
	}
	out = append(out, Line{{Label, "http: "}, {Plain, first}})
	// Only the fields the event had: most have no retry, and a legacy
	// stream's events have no id.
	var sse []string
	for _, f := range []struct{ name, v string }{{"id", h.EventID}, {"event", h.EventType}, {"retry", h.Retry}} {
		if f.v != "" {
			sse = append(sse, fmt.Sprintf("%s=%q", f.name, f.v))
		}
	}
	if len(sse) > 0 {
		out = append(out, Line{{Label, "sse: "}, {Plain, strings.Join(sse, " ")}})
	}
	if len(h.Priming) > 0 {
		out = append(out, Line{{Label, "priming events: "}, {Plain, strings.Join(h.Priming, ", ")}})
	}
	return out
}

func headerLines(prefix string, h http.Header) []Line {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Line
	for _, k := range keys {
		for _, v := range h[k] {
			out = append(out, Line{{Punct, prefix}, {Key, k}, {Punct, ": "}, {Plain, v}})
		}
	}
	return out
}

func dirArrow(d store.Dir) string {
	if d == store.S2C {
		return "←"
	}
	return "→"
}

// durText prints a latency compactly: 850µs, 12.3ms, 1.20s, 3m05s,
// never wider than six characters below an hour. Each unit's bound is
// where its rounding would reach the next unit (99.96ms is "100ms", not
// "100.0ms", which overflows the table's column).
func durText(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < 999500*time.Nanosecond:
		return fmt.Sprintf("%dµs", d.Round(time.Microsecond)/time.Microsecond)
	case d < 99950*time.Microsecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < 999500*time.Microsecond:
		return fmt.Sprintf("%dms", d.Round(time.Millisecond)/time.Millisecond)
	case d < 59995*time.Millisecond:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// Plain text of lines, for tests and copying.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}
