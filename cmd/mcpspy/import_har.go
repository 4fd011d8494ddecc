package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// isHAR says whether the file being imported is an HTTP Archive: named
// .har or .zip, a zip archive (recordHar's), or a JSON document whose
// first member is "log" (a JSONL export's lines begin with "session").
// It leaves f at its start.
func isHAR(f *os.File, path string) bool {
	if store.IsHARPath(path) {
		return true
	}
	defer f.Seek(0, io.SeekStart)
	head := make([]byte, 512)
	n, _ := io.ReadFull(bufio.NewReader(f), head)
	if store.LooksLikeZip(head[:n]) {
		return true
	}
	return store.LooksLikeHAR(head[:n])
}

// importHAR adds the MCP traffic of a HAR to the cassette at out, each
// session recorded as mcpspy record would have (a fresh session id, its
// handshake noted), credentials redacted unless noRedact.
func importHAR(path, out string, redact, redactValue []string, noRedact bool, s streams) error {
	opts, err := harImportOptions(redact, redactValue, noRedact)
	if err != nil {
		return err
	}
	got, err := store.ReadHARFile(path, opts)
	if err != nil {
		return err
	}
	return recordHAR(got, path, out, s)
}

// harImportOptions are the import's --redact, --redact-value and
// --no-redact as a HAR import reads them; a bad one is a usage error.
func harImportOptions(redact, redactValue []string, noRedact bool) (store.HARImportOptions, error) {
	if err := checkRedactNames("import", redact); err != nil {
		return store.HARImportOptions{}, err
	}
	values, err := valuePatterns("import", redactValue)
	if err != nil {
		return store.HARImportOptions{}, err
	}
	headers, err := httpRedactor("import", redact, redactValue, values, noRedact)
	if err != nil {
		return store.HARImportOptions{}, err
	}
	opts := store.HARImportOptions{Rewrite: recorder.Rewriter(redact, values)}
	if headers != nil {
		opts.Redact = headers
	}
	return opts, nil
}

// recordHAR adds got, the MCP traffic of the HAR named path (a file, or
// stdin), to the cassette at out, and says what it took and left out.
func recordHAR(got *store.HARImport, path, out string, s streams) error {
	if len(got.Sessions) == 0 {
		empty := ""
		if got.EmptyWebSockets > 0 {
			empty = "; " + plural.Count(got.EmptyWebSockets, "WebSocket connection") + " with no frames saved"
		}
		return fmt.Errorf("import: %s has no MCP traffic (%s, none a JSON-RPC message, an MCP header or a legacy SSE endpoint%s)", path, plural.Count(got.Skipped, "entry"), empty)
	}
	ids, err := recordSessions(out, got.Sessions, nil) // got is redacted already
	if err != nil {
		return err
	}
	fmt.Fprint(s.Err, importSummary(got.Sessions, path))
	if got.Skipped > 0 {
		fmt.Fprintf(s.Err, "; %s carried no MCP traffic and %s left out", plural.Count(got.Skipped, "entry"), plural.Agree(got.Skipped, "was", "were"))
	}
	fmt.Fprintln(s.Err)
	// A HAR names no session ids: they are the cassette's next. Into one
	// that held sessions already, say which, as a JSONL import does when
	// its ids were taken.
	if len(ids) > 0 && ids[0] != "s1" {
		fmt.Fprintf(s.Err, "mcpspy: import: %s's %s %s in %s, which held sessions already\n", path, plural.Agree(len(ids), "session is", "sessions are"), strings.Join(ids, ", "), out)
	}
	if n := got.EmptyWebSockets; n > 0 {
		fmt.Fprintf(s.Err, "mcpspy: import: warning: %s in %s %s no frames and %s left out (Chrome saves them in _webSocketMessages; other browsers may not)\n", plural.Count(n, "WebSocket connection"), path, plural.Agree(n, "holds", "hold"), plural.Agree(n, "was", "were"))
	}
	if n := got.EmptyStreams; n > 0 {
		fmt.Fprintf(s.Err, "mcpspy: import: warning: %s in %s %s no text, so %s messages are not in the cassette (a stream still open when the HAR was saved, or one whose body the browser left out)\n", plural.Count(n, "event-stream answer"), path, plural.Agree(n, "holds", "hold"), plural.Agree(n, "its", "their"))
	}
	return nil
}

// importSummary is import's line on stderr, without its newline: how
// many messages in how many sessions it took from path.
func importSummary(sessions []store.TapeSession, path string) string {
	messages := 0
	for _, ts := range sessions {
		messages += len(ts.Messages)
	}
	return fmt.Sprintf("mcpspy: import: %s in %s from %s", plural.Count(messages, "message"), plural.Count(len(sessions), "session"), path)
}
