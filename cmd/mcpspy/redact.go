package main

import (
	"fmt"
	"github.com/mcptape/mcptape/internal/cli"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// exportRedactor is export --redact: each message is written with the
// named values blanked inside its frame (recorder.FrameRedactor), and the
// named headers and query parameters in its HTTP metadata too, with the
// credentials the recorder always hides. So a cassette can be shared
// without the secrets it carries, and still replays.
type exportRedactor struct {
	names  []string
	frames *recorder.FrameRedactor
	http   *recorder.HTTPRedactor
	// values are --redact-value's patterns: a string they match is a
	// secret whatever its member is named.
	values *recorder.ValuePatterns
	// What it did, for the summary line.
	blanked, messages, notJSON int
	// unnamed counts the members left as they were that are named like
	// credentials: perhaps a --redact the user did not think of.
	unnamed map[string]int
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
	frame, n, ok := r.frames.Frame(m.Frame)
	if !ok {
		r.notJSON++
	}
	if ok {
		var k int
		frame, k = r.values.Frame(frame)
		n += k
	}
	r.frames.Unnamed(m.Frame, func(name string) { r.unnamed[name]++ })
	if n == 0 && m.HTTP == nil {
		return m
	}
	c := *m
	c.Frame = frame
	if m.HTTP != nil {
		h := r.httpMeta(*m.HTTP)
		c.HTTP = &h
	}
	if n > 0 {
		r.blanked += n
		r.messages++
	}
	return &c
}

// httpMeta returns h with the named headers and query parameters blanked.
func (r *exportRedactor) httpMeta(h store.HTTPMeta) store.HTTPMeta {
	h.RequestHeader = r.http.Header(h.RequestHeader)
	h.ResponseHeader = r.http.Header(h.ResponseHeader)
	if u, err := url.Parse(h.Path); err == nil && h.Path != "" {
		h.Path = r.http.PathQuery(u)
	}
	return h
}

// info returns info, or a copy whose HTTP exchanges without messages
// (SessionInfo.Bare) have their headers blanked as messages' are.
func (r *exportRedactor) info(info *store.SessionInfo) *store.SessionInfo {
	if len(info.Bare) == 0 {
		return info
	}
	c := *info
	c.Bare = make([]store.BareExchange, len(info.Bare))
	for i, b := range info.Bare {
		b.HTTP = r.httpMeta(b.HTTP)
		c.Bare[i] = b
	}
	return &c
}

// summary tells on w what was blanked, and what could not be looked at: a
// frame that is not JSON is written as it came, secrets and all.
func (r *exportRedactor) summary(w io.Writer) {
	switch {
	case r.blanked > 0:
		fmt.Fprintf(w, "mcpspy: export: redacted %s in %s\n", plural.Count(r.blanked, "value"), plural.Count(r.messages, "message"))
	case len(r.names) > 0 && r.values != nil:
		fmt.Fprintf(w, "mcpspy: export: no message has a member named %s or a value --redact-value matches; no value was redacted\n", strings.Join(r.names, " or "))
	case len(r.names) > 0:
		fmt.Fprintf(w, "mcpspy: export: no message has a member named %s; no value was redacted\n", strings.Join(r.names, " or "))
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
