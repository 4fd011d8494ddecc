package replay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcptape/mcptape/internal/mcphttp"
)

// InputSchema returns a tool's inputSchema from the cassette's recorded
// tools/list answers (the last listing of it wins). They are read on
// first use, never at load: most replays never ask.
func (c *Cassette) InputSchema(tool string) (json.RawMessage, bool) {
	c.schemasOnce.Do(func() {
		c.schemas = map[string]json.RawMessage{}
		for _, it := range c.byMethod["tools/list"] {
			var res struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			}
			if json.Unmarshal(it.prep.Reply.Result, &res) != nil {
				continue
			}
			for _, t := range res.Tools {
				c.schemas[t.Name] = t.InputSchema
			}
		}
	})
	s, ok := c.schemas[tool]
	return s, ok
}

// paramHeaders caches each tool's Mcp-Param-* headers, parsed from its
// inputSchema. An entry holds the schema it was parsed from: a source may
// change a tool's schema while serving (mcpmock serve --watch reloads a
// script), and the check must follow what tools/list now says.
type paramHeaders struct {
	mu    sync.Mutex
	tools map[string]parsedParams
}

type parsedParams struct {
	schema json.RawMessage
	params []mcphttp.ParamHeader
}

// checkParams refuses a 2026-07-28 tools/call whose Mcp-Param-* headers
// disagree with its arguments, as a real server must (400, -32020). A
// tool no source lists, or whose x-mcp-header marks break the spec's
// rules (a client must not call it then), is not checked.
func (s *Server) checkParams(h http.Header, body []byte, tool string) *headerError {
	params := s.paramHeadersOf(tool)
	if err := mcphttp.CheckParams(h, body, params); err != nil {
		return mismatch("%v", err)
	}
	return nil
}

// paramHeadersOf is the Mcp-Param-* headers of tool's current schema,
// from the first source that lists it; parsed again only when that
// schema changes.
func (s *Server) paramHeadersOf(tool string) []mcphttp.ParamHeader {
	schema, _ := s.inputSchema(tool)
	ph := &s.params
	ph.mu.Lock()
	defer ph.mu.Unlock()
	if p, ok := ph.tools[tool]; ok && bytes.Equal(p.schema, schema) {
		return p.params
	}
	var params []mcphttp.ParamHeader
	if schema != nil {
		params, _ = mcphttp.ParamHeaders(schema)
	}
	if ph.tools == nil {
		ph.tools = map[string]parsedParams{}
	}
	ph.tools[tool] = parsedParams{schema: schema, params: params}
	return params
}

// inputSchema is a tool's inputSchema from the first source that lists it.
func (s *Server) inputSchema(tool string) (json.RawMessage, bool) {
	for _, src := range s.sources {
		if ts, ok := src.(ToolSchemas); ok {
			if schema, ok := ts.InputSchema(tool); ok {
				return schema, true
			}
		}
	}
	return nil, false
}
