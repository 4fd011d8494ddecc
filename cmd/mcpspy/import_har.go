package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// isHAR says whether the file being imported is an HTTP Archive: named
// .har, or a JSON document whose first member is "log" (a JSONL export's
// lines begin with "session"). It leaves f at its start.
func isHAR(f *os.File, path string) bool {
	if store.IsHARPath(path) {
		return true
	}
	defer f.Seek(0, io.SeekStart)
	head := make([]byte, 512)
	n, _ := io.ReadFull(bufio.NewReader(f), head)
	t := strings.TrimLeft(string(head[:n]), " \t\r\n\ufeff")
	if !strings.HasPrefix(t, "{") {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(t[1:], " \t\r\n"), `"log"`)
}

// importHAR adds the MCP traffic of a HAR to the cassette at out, each
// session recorded as mcpspy record would have (a fresh session id, its
// handshake noted), credentials redacted unless noRedact.
func importHAR(f *os.File, path, out string, redact, redactValue []string, noRedact bool, s streams) error {
	if err := checkRedactNames("import", redact); err != nil {
		return err
	}
	values, err := valuePatterns("import", redactValue)
	if err != nil {
		return err
	}
	headers, err := httpRedactor("import", redact, redactValue, values, noRedact)
	if err != nil {
		return err
	}
	opts := store.HARImportOptions{Rewrite: recorder.Rewriter(redact, values)}
	if headers != nil {
		opts.Redact = headers
	}
	got, err := store.ImportHAR(bufio.NewReader(f), path, opts)
	if err != nil {
		return err
	}
	if len(got.Sessions) == 0 {
		empty := ""
		if got.EmptyWebSockets > 0 {
			empty = fmt.Sprintf("; %d WebSocket connections with no frames saved", got.EmptyWebSockets)
		}
		return fmt.Errorf("import: %s has no MCP traffic (%d entries, none a JSON-RPC message, an MCP header or a legacy SSE endpoint%s)", path, got.Skipped, empty)
	}
	if err := recordSessions(out, got.Sessions); err != nil {
		return err
	}
	messages := 0
	for _, ts := range got.Sessions {
		messages += len(ts.Messages)
	}
	fmt.Fprintf(s.Err, "mcpspy: import: %d messages in %d sessions from %s", messages, len(got.Sessions), path)
	if got.Skipped > 0 {
		fmt.Fprintf(s.Err, "; %d entries carried no MCP traffic and were left out", got.Skipped)
	}
	fmt.Fprintln(s.Err)
	if got.EmptyWebSockets > 0 {
		fmt.Fprintf(s.Err, "mcpspy: import: warning: %d WebSocket connections in %s hold no frames and were left out (Chrome saves them in _webSocketMessages; other browsers may not)\n", got.EmptyWebSockets, path)
	}
	if got.EmptyStreams > 0 {
		fmt.Fprintf(s.Err, "mcpspy: import: warning: %d event-stream answers in %s hold no text, so their messages are not in the cassette (a stream still open when the HAR was saved, or one whose body the browser left out)\n", got.EmptyStreams, path)
	}
	return nil
}
