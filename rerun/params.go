package rerun

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/store"
)

// toolSchemas is what a client knows of each tool's x-mcp-header inputs
// (mcphttp.ToolParams), read from whole frames. A step keeps the one of
// its time.
type toolSchemas mcphttp.ToolParams

// with returns ts and the tools of a tools/list answer (see
// mcphttp.ToolParams.With). A frame that is no tools/list result leaves
// ts as it is.
func (ts toolSchemas) with(frame []byte) toolSchemas {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(frame, &r) != nil {
		return ts
	}
	return toolSchemas(mcphttp.ToolParams(ts).With(r.Result))
}

// paramHeaders sets the Mcp-Param-* headers of a 2026-07-28 tools/call
// (frame) on h, from the best source there is, in this order:
//
//  1. live: the tools/list answers this rerun has had from the server
//     under test. That server checks the headers against its own schema,
//     and a conforming client would use the list it was given.
//  2. st.tools: what the recording's tools/list answers had said by the
//     time of the recorded call, the list the recorded client used.
//  3. st.header: the Mcp-Param-* headers the recorded call carried (an
//     HTTP recording). The frame goes out byte for byte, so the values
//     they mirrored are still right; but one the recorder redacted (a
//     name with "key" or "token" in it) is not sent as "[redacted]": it
//     is left out, and said so in the returned note.
//
// The values of 1 and 2 are read from the frame itself (what is sent),
// never from a recording.
func paramHeaders(h http.Header, frame []byte, name string, live toolSchemas, st *step) (note string) {
	if ps, ok := live[name]; ok {
		mcphttp.SetParams(h, frame, ps)
		return ""
	}
	if st == nil {
		return ""
	}
	if ps, ok := st.tools[name]; ok {
		mcphttp.SetParams(h, frame, ps)
		return ""
	}
	var redacted []string
	for k, vs := range st.header {
		if len(vs) == 0 || !strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") {
			continue
		}
		if vs[0] == store.Redacted {
			redacted = append(redacted, k)
			continue
		}
		h.Set(k, vs[0])
	}
	if len(redacted) == 0 {
		return ""
	}
	slices.Sort(redacted)
	return fmt.Sprintf("%s: not sent: %s, redacted in the recording, and no tools/list told which argument it mirrors",
		st.what, strings.Join(redacted, ", "))
}
