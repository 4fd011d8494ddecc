package inspector

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/store"
)

// SessionDetail builds the detail pane for the sessions pane's selection:
// sessions[sess], or every session in turn when sess is -1 ("all").
func SessionDetail(sessions []Session, sess int) []Line {
	return sessionDetail(sessions, sess, nil)
}

// sessionDetail is SessionDetail with, under each session, what more(i)
// gives for session i (the view adds lint's findings).
func sessionDetail(sessions []Session, sess int, more func(i int) []Line) []Line {
	one := func(i int) []Line {
		out := sessionLines(sessions[i].Info)
		if more != nil {
			out = append(out, more(i)...)
		}
		return out
	}
	if sess >= 0 {
		if sess >= len(sessions) {
			return nil
		}
		return one(sess)
	}
	var out []Line
	for i := range sessions {
		if i > 0 {
			out = append(out, Line{})
		}
		out = append(out, one(i)...)
	}
	return out
}

func sessionLines(info store.SessionInfo) []Line {
	head := "session " + info.ID
	if info.Name != "" {
		head += " " + info.Name
	}
	if info.Transport != "" {
		head += "  " + info.Transport
	}
	out := []Line{{{Heading, head}}}
	if info.Upstream != "" {
		out = append(out, Line{{Label, "upstream: "}, {Plain, info.Upstream}})
	}
	switch {
	case info.HTTPSessionID != "":
		out = append(out, Line{{Label, "mcp-session-id: "}, {Plain, info.HTTPSessionID}})
	case info.Transport == store.TransportHTTP:
		// A server without sessions, or 2026-07-28: mcpspy keeps each
		// connection's traffic apart, so one client may be several
		// sessions, its initialize in one and its calls in others.
		out = append(out, Line{{Label, "mcp-session-id: "}, {Plain, "none: this session is one client connection's traffic"}})
	}
	if !info.Start.IsZero() {
		out = append(out, Line{{Label, "start: "}, {Plain, detailTime(info.Start)}})
	}
	if e := info.End; e != nil {
		end := e.Short()
		if !e.Time.IsZero() {
			end += " at " + detailTime(e.Time)
		}
		if e.Error != "" {
			end += " · " + e.Error
		}
		out = append(out, Line{{Label, "end: "}, {Plain, end}})
	} else {
		// Still recording, or its recorder died: which process recorded
		// it says where to look.
		state := info.EndState()
		if p := info.RecorderProcess; p != nil {
			state += " (recorder " + p.String() + ")"
		}
		out = append(out, Line{{Label, "end: "}, {Plain, state}})
	}
	if h := info.Handshake; h.Method != "" {
		parts := []string{h.Method}
		if h.ProtocolVersion != "" {
			parts[0] += " " + h.ProtocolVersion
		}
		if c := implementation(h.ClientInfo); c != "" {
			parts = append(parts, "client "+c)
		}
		if sv := implementation(h.ServerInfo); sv != "" {
			parts = append(parts, "server "+sv)
		}
		out = append(out, Line{{Label, "handshake: "}, {Plain, strings.Join(parts, " · ")}})
	}
	if c := capabilityList(info.Handshake.Capabilities); c != "" {
		out = append(out, Line{{Label, "capabilities: "}, {Plain, c}})
	}
	if info.Recorder != "" {
		out = append(out, Line{{Label, "recorder: "}, {Plain, info.Recorder}})
	}
	for _, p := range info.Priming {
		out = append(out, Line{{Label, "priming: "}, {Plain, primingText(p)}})
	}
	for _, b := range info.Bare {
		out = append(out, Line{{Label, "no message: "}, {Plain, bareText(b)}})
	}
	if info.BareOmitted > 0 {
		out = append(out, Line{{Label, "no message: "}, {Plain, fmt.Sprintf("%d more not kept", info.BareOmitted)}})
	}
	return out
}

// bareText prints an HTTP exchange that carried no message on one line:
// "DELETE /mcp → 200 · at 2026-11-27 08:00:00.070 · note".
func bareText(b store.BareExchange) string {
	parts := []string{fmt.Sprintf("%s %s → %d", b.HTTP.Method, b.HTTP.Path, b.HTTP.Status)}
	if !b.Time.IsZero() {
		parts = append(parts, "at "+detailTime(b.Time))
	}
	if b.Note != "" {
		parts = append(parts, store.OneLine(b.Note))
	}
	return strings.Join(parts, " · ")
}

// detailTime is a session's start or end, to the millisecond, local time.
func detailTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05.000") }

// implementation prints a clientInfo or serverInfo as "name version", or
// its JSON when it has no name.
func implementation(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var impl struct{ Name, Version string }
	if json.Unmarshal(raw, &impl) != nil || impl.Name == "" {
		return string(raw)
	}
	return strings.TrimSpace(impl.Name + " " + impl.Version)
}

// capabilityList prints server capabilities as
// "logging · resources(listChanged, subscribe) · tools(listChanged)": each
// capability with the flags it sets, or the JSON when it is not an object.
func capabilityList(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil {
		return string(raw)
	}
	names := slices.Sorted(maps.Keys(caps))
	for i, name := range names {
		var flags map[string]any
		_ = json.Unmarshal(caps[name], &flags)
		var on []string
		for _, f := range slices.Sorted(maps.Keys(flags)) {
			if flags[f] == true {
				on = append(on, f)
			}
		}
		if len(on) > 0 {
			names[i] += "(" + strings.Join(on, ", ") + ")"
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " · ")
}

// primingText prints one stream's priming events on one line:
// "get-sse#3 /mcp · ids 0, 1 · retry 5000".
func primingText(p store.StreamPriming) string {
	stream := p.Stream
	if stream == "" {
		stream = "stream"
	}
	if p.StreamID != 0 {
		stream += fmt.Sprintf("#%d", p.StreamID)
	}
	parts := []string{stream}
	if p.Path != "" {
		parts[0] += " " + p.Path
	}
	if len(p.EventIDs) > 0 {
		parts = append(parts, idList(p.EventIDs))
	}
	if p.Retry != "" {
		parts = append(parts, "retry "+p.Retry)
	}
	return strings.Join(parts, " · ")
}

// maxIDs bounds the ids shown for one stream: a server that sends id-only
// events as heartbeats on a long GET stream leaves thousands.
const maxIDs = 6

// idList prints event ids, eliding the middle of a long list.
func idList(ids []string) string {
	var q []string
	for i, id := range ids {
		switch {
		case len(ids) <= maxIDs || i < 3 || i >= len(ids)-2:
			q = append(q, eventID(id))
		case i == 3:
			q = append(q, "…")
		}
	}
	s := "ids " + strings.Join(q, ", ")
	if len(ids) > maxIDs {
		s += fmt.Sprintf(" (%d)", len(ids))
	}
	return s
}

// eventID quotes an id only when it would be ambiguous in a list: empty,
// with a comma, space or quote, or not printable.
func eventID(id string) string {
	if id == "" || strings.ContainsAny(id, ", \"…") || strconv.Quote(id) != `"`+id+`"` {
		return strconv.Quote(id)
	}
	return id
}
