package store

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

func TestAppendHTTPMeta_MatchesJSONMarshal(t *testing.T) {
	tests := []struct {
		name string
		meta *HTTPMeta
	}{
		{name: "nil", meta: nil},
		{name: "empty", meta: &HTTPMeta{}},
		{name: "every field", meta: &HTTPMeta{
			Method: "POST", Path: "/mcp?token=[redacted]", Status: 200,
			RequestHeader:  http.Header{"Content-Type": {"application/json"}},
			ResponseHeader: http.Header{"Mcp-Session-Id": {"abc"}},
			Stream:         "post-sse", StreamID: 7, EventID: "ev-1", EventType: "message",
			Retry: "3000", Priming: []string{"p0", "p1"}, WSOpcode: 1,
		}},
		{name: "only last field", meta: &HTTPMeta{WSOpcode: 2}},
		{name: "only stream id", meta: &HTTPMeta{StreamID: 1<<64 - 1}},
		{name: "negative ints", meta: &HTTPMeta{Status: -1, WSOpcode: -1 << 63}},
		{name: "empty maps and slices omitted", meta: &HTTPMeta{
			Method: "GET", RequestHeader: http.Header{}, ResponseHeader: http.Header{}, Priming: []string{},
		}},
		{name: "nil vs empty header values", meta: &HTTPMeta{
			RequestHeader: http.Header{"A": nil, "B": {}, "C": {""}},
		}},
		{name: "multi-value headers", meta: &HTTPMeta{
			ResponseHeader: http.Header{"Set-Cookie": {"a=1", "b=2", "c=3"}, "Vary": {"Accept", "Origin"}},
		}},
		{name: "unsorted keys", meta: &HTTPMeta{
			RequestHeader: http.Header{
				"Zeta": {"z"}, "alpha": {"a"}, "Alpha": {"A"}, "Mcp-Session-Id": {"s"}, "Mcp-Protocol-Version": {"v"},
				"": {"empty key"}, "a<b": {"x"}, "\u00e9": {"e"}, "~": {"t"}, "Accept": {"*/*"}, "1": {"one"},
				"K01": {"1"}, "K02": {"2"}, "K03": {"3"}, "K04": {"4"}, "K05": {"5"}, "K06": {"6"}, "K07": {"7"},
			},
		}},
		{name: "html chars", meta: &HTTPMeta{
			Path: "/mcp?a=<b>&c='d'", RequestHeader: http.Header{"<X&>": {"<script>&amp;</script>"}},
		}},
		{name: "quotes and backslashes", meta: &HTTPMeta{EventID: `a"b\c\\"`, Priming: []string{`"`, `\`}}},
		{name: "control chars", meta: &HTTPMeta{
			EventType: "\x00\x01\b\t\n\v\f\r\x0e\x1b\x1f \x7f",
			Priming:   []string{"line\r\n", "\x10"},
		}},
		{name: "invalid utf-8", meta: &HTTPMeta{
			Path:          "/\xff\xfe",
			RequestHeader: http.Header{"X-\xc3": {"\xe2\x82", "ok\xed\xa0\x80surrogate", "\xf4\x90\x80\x80"}},
			Retry:         "\xc3\x28 \xef\xbf\xbd",
		}},
		{name: "line and paragraph separators", meta: &HTTPMeta{
			Stream: "a\u2028b\u2029c", RequestHeader: http.Header{"\u2028": {"\u2029"}},
		}},
		{name: "non-ascii kept", meta: &HTTPMeta{EventID: "h\u00e9llo \u4e16\u754c \U0001f600 \u2027\u202a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.meta)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendHTTPMeta(nil, tt.meta); !bytes.Equal(got, want) {
				t.Errorf("appendHTTPMeta:\n got %s\nwant %s", got, want)
			}
			prefix := []byte("prefix")
			if got := appendHTTPMeta(prefix, tt.meta); !bytes.Equal(got, append(prefix, want...)) {
				t.Errorf("appended after a prefix:\n got %s\nwant prefix%s", got, want)
			}
		})
	}
}

// TestAppendHTTPMeta_EveryField sets every field of HTTPMeta, found by
// reflection, so that a field added to the struct and not to
// appendHTTPMeta fails here.
func TestAppendHTTPMeta_EveryField(t *testing.T) {
	var m HTTPMeta
	v := reflect.ValueOf(&m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString(v.Type().Field(i).Name)
		case int:
			f.SetInt(int64(i + 1))
		case uint64:
			f.SetUint(uint64(i + 1))
		case http.Header:
			f.Set(reflect.ValueOf(http.Header{"K": {v.Type().Field(i).Name}}))
		case []string:
			f.Set(reflect.ValueOf([]string{v.Type().Field(i).Name}))
		default:
			t.Fatalf("HTTPMeta.%s has type %s, which appendHTTPMeta does not know", v.Type().Field(i).Name, f.Type())
		}
	}
	want, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendHTTPMeta(nil, &m); !bytes.Equal(got, want) {
		t.Errorf("appendHTTPMeta:\n got %s\nwant %s", got, want)
	}
}

// FuzzAppendHTTPMeta: for any meta, appendHTTPMeta and json.Marshal agree
// byte for byte, and recordBrief reads the status, stream and event type back. The fuzzed strings go everywhere a string can; the flags
// choose which fields, headers and values are nil, empty or repeated.
func FuzzAppendHTTPMeta(f *testing.F) {
	f.Add("POST", "/mcp?x=<y>&z", "Content-Type", "application/json", "Mcp-Session-Id", "a\"b\\c\n\u2028",
		"post-sse", "ev\xff1", 200, uint64(3), 1, uint16(0xf7ff))
	f.Add("", "", "", "", "", "", "", "", 0, uint64(0), 0, uint16(0))
	f.Add("X-", "/", "X-", "v", "", "", "", "", 0, uint64(0), 0, uint16(0x0801))
	f.Add("GET", "\x00\x1f\x7f", "b", "a", "a", "b", "\u2029", "\xed\xa0\x80", -1, uint64(1<<63), -7, uint16(0x5555))
	f.Fuzz(func(t *testing.T, method, path, k1, v1, k2, v2, stream, eventID string,
		status int, streamID uint64, opcode int, flags uint16) {
		bit := func(i uint) bool { return flags&(1<<i) != 0 }
		m := &HTTPMeta{
			Method: method, Path: path, Status: status, Stream: stream, StreamID: streamID,
			EventID: eventID, EventType: v1, Retry: k2, WSOpcode: opcode,
		}
		values := func(v string, nilBit, emptyBit uint) []string {
			switch {
			case bit(nilBit):
				return nil
			case bit(emptyBit):
				return []string{}
			}
			return []string{v, path}
		}
		if bit(0) {
			m.RequestHeader = http.Header{k1: values(v1, 1, 2), k2: values(v2, 3, 4)}
		} else if bit(5) {
			m.RequestHeader = http.Header{}
		}
		if bit(11) {
			// More fields than sortHeader sorts by insertion.
			if m.RequestHeader == nil {
				m.RequestHeader = http.Header{}
			}
			for i := range 20 {
				m.RequestHeader[k1+string(rune('a'+i*5))+v2] = []string{eventID}
			}
		}
		if bit(6) {
			m.ResponseHeader = http.Header{v1: {k1}, v2: values(k2, 7, 8), eventID: {stream, method}}
		}
		switch {
		case bit(9):
			m.Priming = []string{eventID, v2, k1}
		case bit(10):
			m.Priming = []string{}
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendHTTPMeta(nil, m); !bytes.Equal(got, want) {
			t.Fatalf("appendHTTPMeta:\n got %q\nwant %q", got, want)
		}
		// The brief a filter reads of the record is what decoding all of
		// its metadata gives.
		var back HTTPMeta
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		e, err := encodeMessage(&Message{HTTP: m}, &Summary{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := recordBrief(e.rec); err != nil || got != back.Brief() {
			t.Fatalf("recordBrief of %s = %+v, %v; want %+v", want, got, err, back.Brief())
		}
	})
}

func BenchmarkEncodeHTTPMeta(b *testing.B) {
	m := &HTTPMeta{
		Method: "POST",
		Path:   "/mcp",
		Status: 200,
		RequestHeader: http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Session-Id":       {"6f1c2a9e-4b7d-4c1e-9a3f-2d8b5e7c0a14"},
			"Mcp-Protocol-Version": {"2025-11-25"},
			"User-Agent":           {"node-fetch/1.0 (+https://github.com/bitinn/node-fetch)"},
			"Content-Length":       {"312"},
			"Authorization":        {"[redacted]"},
			"Accept-Encoding":      {"gzip, deflate"},
		},
		ResponseHeader: http.Header{
			"Content-Type":   {"text/event-stream"},
			"Cache-Control":  {"no-cache, no-transform"},
			"Connection":     {"keep-alive"},
			"Mcp-Session-Id": {"6f1c2a9e-4b7d-4c1e-9a3f-2d8b5e7c0a14"},
			"Date":           {"Tue, 03 Mar 2026 10:15:42 GMT"},
			"Vary":           {"Origin"},
		},
		Stream:   "post-sse",
		StreamID: 12,
		EventID:  "12/0",
	}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			appendHTTPMeta(nil, m)
		}
	})
}
