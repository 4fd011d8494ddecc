package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// exportRedactor is export --redact: it writes each message with the values
// of the named members blanked (names compared without case, at any depth
// inside params, result and error, except in JSON Schemas), and the named
// headers and query parameters too, with the credentials the recorder
// always hides. So a cassette can be shared without the secrets it
// carries. Replay matches a blanked request value with any live one, so
// the export still replays.
type exportRedactor struct {
	names []string
	http  *recorder.HTTPRedactor
	// What it did, for the summary line.
	values, messages, notJSON int
}

var redactedJSON = []byte(`"` + store.Redacted + `"`)

func newExportRedactor(names []string) (*exportRedactor, error) {
	for _, n := range names {
		if n == "" {
			return nil, usageErrorf("export: --redact wants a member name, got an empty one")
		}
	}
	return &exportRedactor{names: names, http: recorder.NewHTTPRedactor(names)}, nil
}

func (r *exportRedactor) option() store.ExportOption { return store.MapMessages(r.message) }

// schemaMembers hold JSON Schemas: they name the fields a secret may go
// in, and hold no values. Blanking a property named like a secret there
// would break the schema, and with it the replayed tools/list.
var schemaMembers = []string{"inputSchema", "outputSchema", "requestedSchema"}

// message returns m, or a copy with what is secret blanked.
func (r *exportRedactor) message(m *store.Message) *store.Message {
	frame, n, ok := jsonrpc.ReplaceMembers(m.Frame, func(path []string, name string) bool {
		// The JSON-RPC envelope (jsonrpc, id, method, params, result,
		// error) holds no secret, and replay needs it.
		if len(path) == 0 || !r.named(name) {
			return false
		}
		for _, p := range path {
			if slices.Contains(schemaMembers, p) {
				return false
			}
		}
		return true
	}, redactedJSON)
	if !ok {
		r.notJSON++
	}
	if n == 0 && m.HTTP == nil {
		return m
	}
	c := *m
	c.Frame = frame
	if m.HTTP != nil {
		h := *m.HTTP
		h.RequestHeader = r.http.Header(h.RequestHeader)
		h.ResponseHeader = r.http.Header(h.ResponseHeader)
		if path, query, found := strings.Cut(h.Path, "?"); found {
			h.Path = path + "?" + r.http.Query(query)
		}
		c.HTTP = &h
	}
	if n > 0 {
		r.values += n
		r.messages++
	}
	return &c
}

func (r *exportRedactor) named(name string) bool {
	for _, n := range r.names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// summary tells on w what was blanked, and what could not be looked at: a
// frame that is not JSON is written as it came, secrets and all.
func (r *exportRedactor) summary(w io.Writer) {
	if r.values == 0 {
		fmt.Fprintf(w, "mcpspy: export: no message has a member named %s; no value was redacted\n", strings.Join(r.names, " or "))
	} else {
		fmt.Fprintf(w, "mcpspy: export: redacted %s in %s\n", counted(r.values, "value"), counted(r.messages, "message"))
	}
	if r.notJSON > 0 {
		fmt.Fprintf(w, "mcpspy: export: %s not JSON, written as it came: check it by hand before sharing\n", counted(r.notJSON, "message is"))
	}
}

// counted spells "1 value", "2 values"; "1 message is", "2 messages are".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if word, ok := strings.CutSuffix(noun, " is"); ok {
		return fmt.Sprintf("%d %ss are", n, word)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
