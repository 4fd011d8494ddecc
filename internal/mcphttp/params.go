package mcphttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// ParamHeader is one input a tool's inputSchema marks x-mcp-header: the
// request header Mcp-Param-<Name> carries the argument at Path (property
// names from the root of the arguments).
type ParamHeader struct {
	Name string
	Path []string
}

// ParamHeaders returns the x-mcp-header annotations of a tool's
// inputSchema, in no particular order, or an error saying which one
// breaks 2026-07-28's constraints: a name that is not a non-empty HTTP
// token, two names equal but for case, a property whose type is not
// integer, string or boolean, or an annotation not reachable from the
// root through "properties" alone (under items, oneOf, $ref, …). A client
// must then treat the tool as not listed at all.
func ParamHeaders(inputSchema []byte) ([]ParamHeader, error) {
	var root any
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	w := paramWalk{seen: map[string]string{}}
	if err := w.schema(root, nil, true); err != nil {
		return nil, err
	}
	return w.out, nil
}

// ListedTool is one tool of a tools/list result, as a client of
// 2026-07-28 reads it for its Mcp-Param-* headers.
type ListedTool struct {
	Name   string
	Params []ParamHeader
	// Usable is false for a tool without an inputSchema or whose
	// x-mcp-header marks break the spec's constraints: a conforming
	// client drops it from the list, and so knows nothing of its headers.
	Usable bool
}

// ListedTools reads the tools of a tools/list result. A result that is
// not a tool list gives none.
func ListedTools(result json.RawMessage) []ListedTool {
	var r struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	out := make([]ListedTool, 0, len(r.Tools))
	for _, t := range r.Tools {
		ps, err := ParamHeaders(t.InputSchema)
		out = append(out, ListedTool{Name: t.Name, Params: ps, Usable: err == nil && len(t.InputSchema) > 0})
	}
	return out
}

// ToolParams is what a client knows of each tool's Mcp-Param-* headers
// from the tools/list answers it has seen: tool name → the headers its
// inputSchema asks for (none is an entry too). It is never changed in
// place: With returns a new one, so a holder can keep the one of its time.
type ToolParams map[string][]ParamHeader

// With returns tp and the tools of a tools/list result, the newer
// definition of a tool winning. A tool a conforming client drops
// (ListedTool.Usable false) is forgotten. A result that lists no tools
// gives tp itself.
func (tp ToolParams) With(result json.RawMessage) ToolParams {
	listed := ListedTools(result)
	if len(listed) == 0 {
		return tp
	}
	out := maps.Clone(tp)
	if out == nil {
		out = ToolParams{}
	}
	for _, t := range listed {
		if !t.Usable {
			delete(out, t.Name)
			continue
		}
		out[t.Name] = t.Params
	}
	return out
}

type paramWalk struct {
	out  []ParamHeader
	seen map[string]string // lower-case header name → its property path
}

// instanceKeywords hold data, not schemas: an "x-mcp-header" member in a
// default value is no annotation.
var instanceKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// schema walks a (sub)schema at path; static says path was reached
// through "properties" keys only.
func (w *paramWalk) schema(v any, path []string, static bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		if arr, ok := v.([]any); ok { // prefixItems, allOf, …: never static
			for _, e := range arr {
				if err := w.schema(e, path, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if name, has := obj["x-mcp-header"]; has {
		if err := w.annotation(obj, name, path, static); err != nil {
			return err
		}
	}
	// In sorted order, not the map's: which of two marks that repeat a
	// name is the one reported, and the order of what is found, must not
	// change from run to run.
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		sub := obj[k]
		switch {
		case k == "x-mcp-header" || instanceKeywords[k]:
		case k == "properties":
			props, ok := sub.(map[string]any)
			if !ok {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(props)) {
				ps := props[name]
				p := append(append([]string(nil), path...), name)
				if err := w.schema(ps, p, static); err != nil {
					return err
				}
			}
		default:
			if err := w.schema(sub, path, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *paramWalk) annotation(obj map[string]any, name any, path []string, static bool) error {
	where := "the schema root"
	if len(path) > 0 {
		where = "property " + strings.Join(path, ".")
	}
	s, ok := name.(string)
	switch {
	case !static || len(path) == 0:
		return fmt.Errorf("%s: x-mcp-header is allowed only on a property reached through \"properties\" alone", where)
	case !ok || s == "":
		return fmt.Errorf("%s: x-mcp-header must be a non-empty string", where)
	case !IsToken(s):
		return fmt.Errorf("%s: x-mcp-header %q is not an HTTP token", where, s)
	case !primitiveType(obj["type"]):
		return fmt.Errorf("%s: x-mcp-header %q on type %v; only integer, string and boolean may be mirrored", where, s, obj["type"])
	}
	key := strings.ToLower(s)
	if other, dup := w.seen[key]; dup {
		return fmt.Errorf("%s: x-mcp-header %q repeats the one on %s (names compare without case)", where, s, other)
	}
	w.seen[key] = strings.Join(path, ".")
	w.out = append(w.out, ParamHeader{Name: s, Path: path})
	return nil
}

// primitiveType says whether a schema's type is one a header may mirror:
// integer, string or boolean, or a list of those (with "null", whose
// value is sent as no header).
func primitiveType(t any) bool {
	ok := func(s any) bool { return s == "integer" || s == "string" || s == "boolean" }
	switch t := t.(type) {
	case string:
		return ok(t)
	case []any:
		n := 0
		for _, e := range t {
			switch {
			case ok(e):
				n++
			case e != "null":
				return false
			}
		}
		return n > 0
	}
	return false
}

// IsToken says whether s is an RFC 9110 token (1*tchar), as a header's
// name must be.
func IsToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// SetParams sets Mcp-Param-<Name> on h for each of params whose argument
// is in the tools/call frame: read at its exact path in params.arguments,
// omitted when absent or null, and written as 2026-07-28's Value Encoding
// says (a string as it is, an integer in decimal, a boolean as true or
// false, then EncodeValue). It mirrors the body as it is, not as the
// schema says it should be: a number with a fraction goes as written, and
// an object or array, which no header can carry, is left out, so that a
// server sees the same mismatch the recorded body would give it.
func SetParams(h http.Header, frame []byte, params []ParamHeader) {
	if len(params) == 0 {
		return
	}
	arguments, ok := argumentsOf(frame)
	if !ok {
		return
	}
	for _, p := range params {
		if v, ok := headerValue(lookup(arguments, p.Path)); ok {
			h.Set("Mcp-Param-"+p.Name, EncodeValue(v))
		}
	}
}

// argumentsOf returns params.arguments of a tools/call frame (nil when
// absent); ok is false when the frame, or its params, is not an object.
// It reads with jsonrpc's scanner: the arguments may be 64 MiB, and
// encoding/json would go through them twice, five times slower.
func argumentsOf(frame []byte) (arguments []byte, ok bool) {
	var params []byte
	if !jsonrpc.Members(frame, func(name, v []byte) {
		if string(name) == "params" {
			params = v
		}
	}) {
		return nil, false
	}
	if params == nil || string(params) == "null" {
		return nil, true
	}
	ok = jsonrpc.Members(params, func(name, v []byte) {
		if string(name) == "arguments" {
			arguments = v
		}
	})
	return arguments, ok
}

// lookup returns the JSON value at path inside v, or nil. Names match
// exactly, as JSON's do (encoding/json's struct fields would not).
func lookup(v []byte, path []string) []byte {
	if len(path) == 0 {
		return v
	}
	return jsonrpc.Member(v, path...)
}

// headerValue is a primitive JSON value as header text, before encoding.
func headerValue(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch v[0] {
	case '"':
		var s string
		return s, json.Unmarshal(v, &s) == nil
	case 't', 'f':
		return string(v), string(v) == "true" || string(v) == "false"
	case 'n', '{', '[':
		return "", false
	}
	return integerText(string(v)), true
}

// integerText writes a JSON number that is an integer (42, 42.0, 4.2e1)
// in plain decimal, as the header's integer form; any other number as
// written.
func integerText(n string) string {
	if _, err := strconv.ParseInt(n, 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return n
	}
	return strconv.FormatInt(int64(f), 10)
}
