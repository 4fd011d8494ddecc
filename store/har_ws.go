package store

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// A WebSocket session in a HAR is one entry, its upgrade, with the
// frames in "_webSocketMessages", the field Chrome's devtools save them
// in: each a "send" or "receive" with its time in seconds since the
// epoch, its opcode, and its data (base64 for a binary frame).

// harWSMessage is one frame, as Chrome writes it.
type harWSMessage struct {
	Type   string  `json:"type"` // "send": the client's; "receive": the server's
	Time   float64 `json:"time"`
	Opcode int     `json:"opcode"`
	Data   string  `json:"data"`
}

// addWebSocket makes the session's page and its one entry.
func (h *HAR) addWebSocket(s *TapeSession) {
	info := &s.Info
	e := &harEntry{Pageref: info.ID, MCPTape: harEntryExt{Session: info.ID, Stream: StreamWS}}
	var first *HTTPMeta
	var frames []harWSMessage
	start, end := info.Start, time.Time{}
	for _, m := range s.Messages {
		if m.HTTP == nil || m.HTTP.Stream != StreamWS {
			h.Unplaced++
			continue
		}
		if first == nil {
			first = m.HTTP
		}
		if start.IsZero() || m.Time.Before(start) {
			start = m.Time
		}
		end = m.Time
		f := harWSMessage{Type: "send", Time: float64(m.Time.UnixMicro()) / 1e6, Opcode: m.HTTP.WSOpcode, Data: string(m.Frame)}
		if m.Dir == S2C {
			f.Type = "receive"
		}
		if f.Opcode == 0 {
			f.Opcode = 1
		}
		if f.Opcode != 1 || !utf8.Valid(m.Frame) {
			f.Data = base64.StdEncoding.EncodeToString(m.Frame)
		}
		frames = append(frames, f)
		e.MCPTape.MessageSeqs = append(e.MCPTape.MessageSeqs, m.Seq)
	}
	if info.End != nil && info.End.Time.After(end) {
		end = info.End.Time
	}
	if end.Before(start) {
		end = start
	}
	meta := &HTTPMeta{Method: http.MethodGet, Status: http.StatusSwitchingProtocols}
	if first != nil {
		meta = first
	}
	base := harBaseURL(info.Upstream)
	path := meta.Path
	if path == "" {
		if u, ok := ParseUpstream(info.Upstream); ok {
			path = u.Path
		}
	}
	if path == "" || !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	e.start = start
	e.StartedDateTime = start.UTC().Format(harTime)
	e.Time = harMillis(end.Sub(start))
	e.Request = harRequest{
		Method: http.MethodGet, URL: base + path, HTTPVersion: "HTTP/1.1",
		Cookies: harCookies(meta.RequestHeader, false), Headers: harHeaders(meta.RequestHeader),
		QueryString: harQuery(path), HeadersSize: -1, BodySize: 0,
	}
	e.Response = harResponse{
		Status: http.StatusSwitchingProtocols, StatusText: http.StatusText(http.StatusSwitchingProtocols), HTTPVersion: "HTTP/1.1",
		Cookies: harCookies(meta.ResponseHeader, true), Headers: harHeaders(meta.ResponseHeader),
		Content: harContent{Size: 0, MimeType: "x-unknown"}, RedirectURL: "", HeadersSize: -1, BodySize: 0,
	}
	e.Timings = harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: 0, Receive: e.Time}
	e.Comment = "session " + info.ID + ": a WebSocket connection; its frames are in _webSocketMessages"
	if len(frames) == 0 {
		e.Comment += " (none was recorded)"
	}
	e.WebSocketMessages = frames
	h.doc.Log.Entries = append(h.doc.Log.Entries, e)
	page := harPageOf(info)
	page.StartedDateTime = start.UTC().Format(harTime)
	h.doc.Log.Pages = append(h.doc.Log.Pages, page)
}
