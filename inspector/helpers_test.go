package inspector

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// frame is a message to record in a test cassette.
type frame struct {
	dir  store.Dir
	at   time.Duration // after the session's start
	json string
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// sampleSession is a handshake, a paired tool call with progress, a
// server→client request whose id collides with a client id, an error, an
// isError result, and a malformed frame.
var sampleSession = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
	{store.S2C, 2 * time.Millisecond, `{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}},"jsonrpc":"2.0","id":1}`},
	{store.C2S, 3 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{store.C2S, 10 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"Hello"},"_meta":{"progressToken":7}}}`},
	{store.C2S, 11 * time.Millisecond, `{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"slow-op","arguments":{}}}`},
	{store.S2C, 12 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2}}`},
	{store.S2C, 13 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"method":"roots/list"}`},
	{store.C2S, 14 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"result":{"roots":[]}}`},
	{store.S2C, 15 * time.Millisecond, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Echo: Hello"}]}}`},
	{store.S2C, 311 * time.Millisecond, `{"jsonrpc":"2.0","id":"2","result":{"content":[{"type":"text","text":"boom"}],"isError":true}}`},
	{store.C2S, 320 * time.Millisecond, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://missing"}}`},
	{store.S2C, 321 * time.Millisecond, `{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found"}}`},
	{store.S2C, 330 * time.Millisecond, `this is not json`},
}

// writeCassette records sessions into a new cassette and returns its path.
func writeCassette(tb testing.TB, sessions ...[]frame) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "test.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	for i, frames := range sessions {
		recordSession(tb, w, "server", t0.Add(time.Duration(i)*time.Second), frames)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// recordSession records a stdio session of frames into w, started at
// start, against the upstream command upstream; it ends a second later.
func recordSession(tb testing.TB, w *store.Writer, upstream string, start time.Time, frames []frame) {
	tb.Helper()
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: upstream, Start: start})
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range frames {
		s.Append(f.dir, start.Add(f.at), []byte(f.json), nil)
	}
	if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: start.Add(time.Second)}); err != nil {
		tb.Fatal(err)
	}
}

func openModel(tb testing.TB, path string) (*Model, Source) {
	tb.Helper()
	m, src, err := Open(path)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	return m, src
}

// metaFrame is a message to record, with its HTTP metadata as given, in a test
// cassette of one HTTP session (writeHTTPSession).
type metaFrame struct {
	dir   store.Dir
	frame string
	meta  *store.HTTPMeta
}

// writeHTTPSession records one session of frames, a millisecond apart,
// that ends a second after t0, into a new cassette named name, and
// returns its path. info's start is t0.
func writeHTTPSession(tb testing.TB, name string, info store.SessionInfo, frames []metaFrame) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	info.Start = t0
	s, err := w.NewSession(info)
	if err != nil {
		tb.Fatal(err)
	}
	for i, f := range frames {
		s.Append(f.dir, t0.Add(time.Duration(i)*time.Millisecond), []byte(f.frame), f.meta)
	}
	if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: t0.Add(time.Second)}); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// jsonlTwin exports the cassette at path to a .jsonl of the same name in a
// temporary directory, and returns its path.
func jsonlTwin(tb testing.TB, path string) string {
	tb.Helper()
	var jsonl bytes.Buffer
	if err := store.Export(path, &jsonl, nil); err != nil {
		tb.Fatal(err)
	}
	twin := filepath.Join(tb.TempDir(), strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".jsonl")
	if err := os.WriteFile(twin, jsonl.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return twin
}

// textLines opens a cassette of sessions and returns what mcpspy show
// prints for it, a line each (the last one empty).
func textLines(tb testing.TB, sessions ...[]frame) []string {
	tb.Helper()
	m, src := openModel(tb, writeCassette(tb, sessions...))
	var out bytes.Buffer
	if _, err := m.WriteText(context.Background(), &out, src, TextOptions{}); err != nil {
		tb.Fatal(err)
	}
	return strings.Split(out.String(), "\n")
}
