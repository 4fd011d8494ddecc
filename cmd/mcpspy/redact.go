package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// exportRedactor is export --redact: each message is written with the
// named values blanked inside its frame (recorder.FrameRedactor), and the
// named headers and query parameters in its HTTP metadata too, with the
// credentials the recorder always hides; each session's info likewise
// (its upstream, the handshake it keeps, its notes). So a cassette can be
// shared without the secrets it carries, and still replays.
type exportRedactor struct {
	names  []string
	frames *recorder.FrameRedactor
	http   *recorder.HTTPRedactor
	// values are --redact-value's patterns: a string they match is a
	// secret whatever its member is named.
	values *recorder.ValuePatterns
	// What it did, for the summary line: values blanked, in how many
	// messages and in how many sessions' infos.
	blanked, messages, infos, notJSON int
	// unnamed counts the members left as they were that are named like
	// credentials: perhaps a --redact the user did not think of.
	unnamed map[string]int
	// checkOnly is an export without --redact or --redact-value: nothing
	// is changed, but the credentials record would have hidden are
	// counted (a recording made with --no-redact, by an older mcpspy, by
	// another tool), so that the user is told before sharing the file.
	checkOnly bool
}

// newCredentialCheck is the exportRedactor of an export given neither
// --redact nor --redact-value: see checkOnly.
func newCredentialCheck() *exportRedactor {
	r, err := newExportRedactor(nil, nil)
	if err != nil { // no names and no patterns: nothing to refuse
		panic(err)
	}
	r.checkOnly = true
	return r
}

func newExportRedactor(names, patterns []string) (*exportRedactor, error) {
	if err := checkRedactNames("export", names); err != nil {
		return nil, err
	}
	values, err := valuePatterns("export", patterns)
	if err != nil {
		return nil, err
	}
	http := recorder.NewHTTPRedactor(names)
	http.Values = values // header values, query values and path segments, as record does
	return &exportRedactor{names: names, values: values, frames: recorder.NewFrameRedactor(names), http: http, unnamed: map[string]int{}}, nil
}

// The help of record's and rerun's --redact, --redact-value and
// --no-redact: both store what a server sent, and hide the same.
const (
	redactUsage = "also store as \"[redacted]\" the value of every header, query parameter, message member (inside\n" +
		"params, results and errors) and server command-line flag with this `NAME`; repeatable. Replay matches a\n" +
		"redacted value with any value"
	redactValueUsage = "also store as \"[redacted]\" every message member (inside params, results and errors) whose string\n" +
		"value, or an array element of it, the Go regular expression `REGEX` matches, and every header value, query\n" +
		"parameter value, URL path segment and server command-line argument it matches: secrets found by what they\n" +
		"look like (sk-[A-Za-z0-9]{20,}); repeatable. Replay matches a redacted value with any value"
	noRedactUsage = "store credentials as they are (they are redacted by default)"
)

// checkRedactNames refuses an empty --redact value, which would name
// nothing and leave the user believing something was hidden.
func checkRedactNames(cmd string, names []string) error {
	return cli.NonEmpty(cmd, "redact", "a member, header or parameter name", names)
}

// httpRedactor is what record and import hide in HTTP headers, queries
// and URLs: the default secret names and --redact's, and what
// --redact-value's patterns (values) match; nil with --no-redact, which
// contradicts either flag.
func httpRedactor(cmd string, names, patterns []string, values *recorder.ValuePatterns, noRedact bool) (*recorder.HTTPRedactor, error) {
	switch {
	case noRedact && len(names) > 0:
		return nil, usageErrorf("%s: --redact and --no-redact contradict each other", cmd)
	case noRedact && len(patterns) > 0:
		return nil, usageErrorf("%s: --redact-value and --no-redact contradict each other", cmd)
	case noRedact:
		return nil, nil
	}
	red := recorder.NewHTTPRedactor(names)
	red.Values = values
	return red, nil
}

// valuePatterns compiles cmd's --redact-value patterns; a bad one is a
// usage error that names it.
func valuePatterns(cmd string, patterns []string) (*recorder.ValuePatterns, error) {
	v, err := recorder.NewValuePatterns(patterns)
	if err != nil {
		return nil, usageErrorf("%s: %v", cmd, recorder.OptionError("--redact-value", err))
	}
	return v, nil
}

func (r *exportRedactor) options() []store.ExportOption {
	return []store.ExportOption{store.MapMessages(r.message), store.MapSessionInfo(r.info)}
}

// message returns m, or a copy with what is secret blanked.
func (r *exportRedactor) message(m *store.Message) *store.Message {
	if r.checkOnly {
		// Only what record hides by default, which is outside the frame.
		if m.HTTP != nil {
			if _, n := r.httpMeta(*m.HTTP); n > 0 {
				r.blanked += n
				r.messages++
			}
		}
		return m
	}
	frame, n, ok := r.frame(m.Frame)
	if !ok {
		r.notJSON++
	}
	r.frames.Unnamed(m.Frame, func(name string) { r.unnamed[name]++ })
	c := *m
	c.Frame = frame
	if m.HTTP != nil {
		h, k := r.httpMeta(*m.HTTP)
		c.HTTP = &h
		n += k
	}
	c.Note, n = r.text(m.Note, n)
	if n == 0 {
		return m
	}
	r.blanked += n
	r.messages++
	return &c
}

// frame returns frame with the named members blanked and those holding a
// value --redact-value matches, and how many; ok is false when frame is
// not JSON.
func (r *exportRedactor) frame(frame []byte) (out []byte, n int, ok bool) {
	out, n, ok = r.frames.Frame(frame)
	if ok {
		var k int
		out, k = r.values.Frame(out)
		n += k
	}
	return out, n, ok
}

// text returns s, or "[redacted]" when a --redact-value pattern matches
// it, and n plus one if so: a string the recording kept outside the
// frames (a note, an end's error, an SSE event id) goes whole, as a
// member's value does.
func (r *exportRedactor) text(s string, n int) (string, int) {
	if s == "" || s == store.Redacted || !r.values.Match(s) {
		return s, n
	}
	return store.Redacted, n + 1
}

// httpMeta returns h with the named headers and query parameters blanked,
// and what --redact-value matches in them and in its SSE event ids, and
// how many values it blanked.
func (r *exportRedactor) httpMeta(h store.HTTPMeta) (store.HTTPMeta, int) {
	n := 0
	for _, hdr := range []*http.Header{&h.RequestHeader, &h.ResponseHeader} {
		was := *hdr
		*hdr = r.http.Header(was)
		for k, vals := range *hdr {
			for i, v := range vals {
				if v != was[k][i] {
					n++
				}
			}
		}
	}
	h.Path, n = r.target(h.Path, n)
	h.EventID, n = r.text(h.EventID, n)
	h.Priming, n = r.eventIDs(h.Priming, n)
	return h, n
}

// target returns a recorded request target (path and query) with what
// --redact names and --redact-value matches in it blanked, and n plus the
// values blanked.
func (r *exportRedactor) target(path string, n int) (string, int) {
	out := r.http.StoredPath(path)
	return out, n + blankedIn(path, out)
}

// eventIDs returns ids, or a copy with those --redact-value matches
// blanked, and n plus how many.
func (r *exportRedactor) eventIDs(ids []string, n int) ([]string, int) {
	var out []string
	for i, id := range ids {
		if blank, k := r.text(id, 0); k > 0 {
			if out == nil {
				out = slices.Clone(ids)
			}
			out[i], n = blank, n+k
		}
	}
	if out == nil {
		return ids, n
	}
	return out, n
}

// blankedIn counts the values blanked in after that were not in before
// (at least one when they differ): a password in a URL is written
// escaped, and so is not counted by its text.
func blankedIn(before, after string) int {
	if before == after {
		return 0
	}
	return max(1, strings.Count(after, store.Redacted)-strings.Count(before, store.Redacted))
}

// info returns info, or a copy with what is secret blanked: its upstream
// (a URL, or the server's command line), the handshake it keeps as the
// frames it came from are blanked, how it ended, its notes, and the HTTP
// metadata of its exchanges without messages (SessionInfo.Bare) and of
// its lone priming events.
func (r *exportRedactor) info(info *store.SessionInfo) *store.SessionInfo {
	c := *info
	n := 0
	c.Upstream = r.http.CommandLine(strings.Split(info.Upstream, " "))
	n += blankedIn(info.Upstream, c.Upstream)
	c.Name, n = r.text(info.Name, n)
	c.HTTPSessionID, n = r.text(info.HTTPSessionID, n)
	if c.HTTPSessionID != "" && slices.ContainsFunc(r.names, func(name string) bool { return strings.EqualFold(name, "Mcp-Session-Id") }) {
		c.HTTPSessionID, n = store.Redacted, n+1 // as the header is
	}
	if info.End != nil {
		end := *info.End
		end.Error, n = r.text(end.Error, n)
		c.End = &end
	}
	c.Handshake, n = r.handshake(info.Handshake, n)
	if len(info.Bare) > 0 {
		c.Bare = make([]store.BareExchange, len(info.Bare))
		for i, b := range info.Bare {
			var k int
			b.HTTP, k = r.httpMeta(b.HTTP)
			b.Note, k = r.text(b.Note, k)
			c.Bare[i], n = b, n+k
		}
	}
	if len(info.Priming) > 0 {
		c.Priming = make([]store.StreamPriming, len(info.Priming))
		for i, p := range info.Priming {
			p.Path, n = r.target(p.Path, n)
			p.EventIDs, n = r.eventIDs(p.EventIDs, n)
			c.Priming[i] = p
		}
	}
	if n == 0 {
		return info
	}
	r.blanked += n
	r.infos++
	if r.checkOnly {
		return info
	}
	return &c
}

// handshake returns h with what is secret blanked as it was in the
// initialize (or server/discover) exchange it came from: clientInfo as a
// member of the request's params, serverInfo, capabilities and
// instructions as members of the result. n grows by the values blanked.
func (r *exportRedactor) handshake(h store.Handshake, n int) (store.Handshake, int) {
	h.ClientInfo, n = r.member("params", "clientInfo", h.ClientInfo, n)
	h.ServerInfo, n = r.member("result", "serverInfo", h.ServerInfo, n)
	h.Capabilities, n = r.member("result", "capabilities", h.Capabilities, n)
	if h.Instructions != "" {
		quoted, err := json.Marshal(h.Instructions)
		if err != nil { // a string always marshals
			panic(err)
		}
		if out, k := r.member("result", "instructions", quoted, 0); k > 0 {
			var s string
			if json.Unmarshal(out, &s) != nil {
				s = store.Redacted // a named member is blanked as a string: this never happens
			}
			h.Instructions, n = s, n+k
		}
	}
	return h, n
}

// member returns raw, a JSON value the session info keeps, blanked as
// the frame it was taken from would be: it is redacted inside a frame
// {under: {name: raw}}, so that --redact NAME and --redact-value see it
// where they see it in the frame. n grows by the values blanked.
func (r *exportRedactor) member(under, name string, raw json.RawMessage, n int) (json.RawMessage, int) {
	if len(raw) == 0 {
		return raw, n
	}
	prefix := `{"` + under + `":{"` + name + `":`
	frame := append(append([]byte(prefix), raw...), "}}"...)
	out, k, ok := r.frame(frame)
	if !ok || k == 0 {
		return raw, n
	}
	// Only values inside raw change: the wrapping stays as it was.
	return json.RawMessage(out[len(prefix) : len(out)-len("}}")]), n + k
}

// summary tells on w what was blanked, and what could not be looked at: a
// frame that is not JSON is written as it came, secrets and all.
func (r *exportRedactor) summary(w io.Writer) {
	if r.checkOnly {
		if r.blanked > 0 {
			fmt.Fprintf(w, "mcpspy: export: %s %s credentials that mcpspy record hides, written as they are (recorded with --no-redact, by an older mcpspy or by another tool); any --redact or --redact-value hides them (export --redact authorization)\n",
				r.where(), plural.Agree(r.messages+r.infos, "holds", "hold"))
		}
		return
	}
	switch {
	case r.blanked > 0:
		fmt.Fprintf(w, "mcpspy: export: redacted %s in %s\n", plural.Count(r.blanked, "value"), r.where())
	case len(r.names) > 0 && r.values != nil:
		fmt.Fprintf(w, "mcpspy: export: no member, header or query parameter is named %s and no value matches --redact-value; no value was redacted\n", strings.Join(r.names, " or "))
	case len(r.names) > 0:
		fmt.Fprintf(w, "mcpspy: export: no member, header or query parameter is named %s; no value was redacted\n", strings.Join(r.names, " or "))
	default:
		fmt.Fprintf(w, "mcpspy: export: no value matches --redact-value; no value was redacted\n")
	}
	if len(r.unnamed) > 0 {
		var list []string
		for _, name := range slices.Sorted(maps.Keys(r.unnamed)) {
			list = append(list, fmt.Sprintf("%s ×%d", name, r.unnamed[name]))
		}
		fmt.Fprintf(w, "mcpspy: export: left as they were, though named like credentials: %s; add --redact NAME to hide one\n", strings.Join(list, ", "))
	}
	if r.notJSON > 0 {
		fmt.Fprintf(w, "mcpspy: export: %s not JSON, written as it came: check it by hand before sharing\n", plural.Count(r.notJSON, "message is"))
	}
}

// where names what held the values blanked: "2 messages and the info of
// 1 session".
func (r *exportRedactor) where() string {
	var where []string
	if r.messages > 0 {
		where = append(where, plural.Count(r.messages, "message"))
	}
	if r.infos > 0 {
		where = append(where, "the info of "+plural.Count(r.infos, "session"))
	}
	return strings.Join(where, " and ")
}
