package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var jsoncOptions = WrapOptions{Mcpspy: "/bin/mcpspy", Cassette: "/c.db"}

// wrap edits a server's command and args and nothing else: comments
// anywhere, trailing commas, the order and layout of every other member
// stay byte for byte, and unwrap gives back the file as it was.
func TestWrapHostConfig_JSONC(t *testing.T) {
	const rec = `"record", "-o", "/c.db", "--session", "a", "--", `
	// An empty args list of the user's own is marked, for unwrap to keep.
	const recKeep = `"record", "--unwrap-keeps-args", "-o", "/c.db", "--session", "a", "--", `
	tests := []struct {
		name, config, want string
		back               string // what unwrap gives back, when not config
	}{
		{
			"plain JSON keeps its layout",
			`{"mcpServers":{"a":{"command":"node","args":["s.js"]}},"other":1}`,
			`{"mcpServers":{"a":{"command":"/bin/mcpspy","args":[` + rec + `"node", "s.js"]}},"other":1}`,
			"",
		},
		{
			"comments before and after members",
			"// head\n{\n  // before\n  \"servers\": { /* in */ \"a\": {\"command\": \"node\"} // after\n  }, /* between */\n  \"x\": 1 // last\n}\n// tail\n",
			"// head\n{\n  // before\n  \"servers\": { /* in */ \"a\": {\"command\": \"/bin/mcpspy\", \"args\": [" + rec + "\"node\"]} // after\n  }, /* between */\n  \"x\": 1 // last\n}\n// tail\n",
			"",
		},
		{
			"comments inside a server",
			"{\"servers\": {\"a\": {\n    // the server\n    \"command\": /* which */ \"node\", // node\n    \"args\": [\"s.js\" /* script */]\n  }}}",
			"{\"servers\": {\"a\": {\n    // the server\n    \"command\": /* which */ \"/bin/mcpspy\", // node\n    \"args\": [" + rec + "\"node\", \"s.js\" /* script */]\n  }}}",
			"",
		},
		{
			"trailing commas after the last member",
			"{\n\t\"servers\": {\n\t\t\"a\": {\n\t\t\t\"command\": \"node\",\n\t\t},\n\t},\n}",
			"{\n\t\"servers\": {\n\t\t\"a\": {\n\t\t\t\"command\": \"/bin/mcpspy\",\n\t\t\t\"args\": [" + rec + "\"node\"],\n\t\t},\n\t},\n}",
			"",
		},
		{
			"the comment that ends the last member's line stays with it",
			"{\"servers\": {\"a\": {\n  \"command\": \"node\" // from PATH\n}, \"b\": {\n  \"command\": \"node\", // from PATH\n}}}",
			"{\"servers\": {\"a\": {\n  \"command\": \"/bin/mcpspy\", // from PATH\n  \"args\": [" + rec + "\"node\"]\n}, \"b\": {\n  \"command\": \"/bin/mcpspy\", // from PATH\n  \"args\": [" + strings.Replace(rec, `"a"`, `"b"`, 1) + "\"node\"],\n}}}",
			"",
		},
		{
			"a block comment after the last member",
			"{\"servers\": {\"a\": {\n  \"command\": \"node\" /* PATH */\n}}}",
			"{\"servers\": {\"a\": {\n  \"command\": \"/bin/mcpspy\",\n  \"args\": [" + rec + "\"node\"] /* PATH */\n}}}",
			"",
		},
		{
			"args before command",
			`{"servers": {"a": {"type": "stdio", "args": [], "command": "node"}}}`,
			`{"servers": {"a": {"type": "stdio", "args": [` + recKeep + `"node"], "command": "/bin/mcpspy"}}}`,
			"",
		},
		{
			"args one per line stay one per line",
			"{\"servers\": {\"a\": {\n  \"command\": \"node\",\n  \"args\": [\n    \"s.js\",\n    \"--port\", \"1\", // the port\n  ],\n}}}",
			"{\"servers\": {\"a\": {\n  \"command\": \"/bin/mcpspy\",\n  \"args\": [\n    \"record\",\n    \"-o\",\n    \"/c.db\",\n    \"--session\",\n    \"a\",\n    \"--\",\n    \"node\",\n    \"s.js\",\n    \"--port\", \"1\", // the port\n  ],\n}}}",
			"",
		},
		{
			"empty args",
			`{"servers": {"a": {"args": [ ], "command": "node"}}}`,
			`{"servers": {"a": {"args": [` + recKeep + `"node" ], "command": "/bin/mcpspy"}}}`,
			"",
		},
		{
			"CRLF line ends",
			"{\r\n  \"servers\": {\r\n    \"a\": {\r\n      \"command\": \"node\" // c\r\n    }\r\n  }\r\n}\r\n",
			"{\r\n  \"servers\": {\r\n    \"a\": {\r\n      \"command\": \"/bin/mcpspy\", // c\r\n      \"args\": [" + rec + "\"node\"]\r\n    }\r\n  }\r\n}\r\n",
			"",
		},
		{
			"comment-like text in strings is no comment",
			`{"servers": {"a": {"command": "node", "args": ["//x", "/*", "a\"//,]"]}}, "u": "http://x"}`,
			`{"servers": {"a": {"command": "/bin/mcpspy", "args": [` + rec + `"node", "//x", "/*", "a\"//,]"]}}, "u": "http://x"}`,
			"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, notes, err := WrapHostConfig([]byte(tt.config), jsoncOptions)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("wrap:\n got %q\nwant %q", out, tt.want)
			}
			for _, n := range notes {
				if !strings.HasPrefix(n.Note, "records into") {
					t.Errorf("notes %q", notes)
				}
			}
			back, _, err := WrapHostConfig(out, WrapOptions{Unwrap: true})
			if err != nil {
				t.Fatal(err)
			}
			if tt.back == "" {
				tt.back = tt.config
			}
			if string(back) != tt.back {
				t.Errorf("unwrap:\n got %q\nwant %q", back, tt.back)
			}
		})
	}
}

// vscodeConfig is shaped as VS Code writes and documents .vscode/mcp.json.
const vscodeConfig = `{
	// 💡 Inputs are prompted on first server start, then stored securely by VS Code.
	"inputs": [
		{
			"type": "promptString",
			"id": "perplexity-key",
			"description": "Perplexity API Key",
			"password": true
		}
	],
	"servers": {
		// https://github.com/ppl-ai/modelcontextprotocol/
		"Perplexity": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-perplexity-ask"],
			"env": {
				"PERPLEXITY_API_KEY": "${input:perplexity-key}",
			},
		},
		"fetch": {
			"command": "uvx",
			"args": ["mcp-server-fetch"]
		},
		/* "off": {"command": "node", "args": ["off.js"]}, */
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
		},
	},
}
`

func TestWrapHostConfig_VSCodeJSONC(t *testing.T) {
	out, notes, err := WrapHostConfig([]byte(vscodeConfig), jsoncOptions)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := stripJSONC(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Inputs  []map[string]any
		Servers map[string]struct {
			Type, Command, URL string
			Args               []string
			Env                map[string]string
		}
	}
	if err := json.Unmarshal(plain, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p := got.Servers["Perplexity"]; p.Type != "stdio" || p.Command != "/bin/mcpspy" || strings.Join(p.Args, " ") != "record -o /c.db --session Perplexity -- npx -y @modelcontextprotocol/server-perplexity-ask" || p.Env["PERPLEXITY_API_KEY"] != "${input:perplexity-key}" {
		t.Errorf("Perplexity: %+v", p)
	}
	if f := got.Servers["fetch"]; strings.Join(f.Args, " ") != "record -o /c.db --session fetch -- uvx mcp-server-fetch" {
		t.Errorf("fetch: %+v", f)
	}
	if g := got.Servers["github"]; g.URL == "" || g.Command != "" || len(got.Servers) != 3 || len(got.Inputs) != 1 {
		t.Errorf("%+v", got)
	}
	if len(notes) != 3 || !strings.Contains(notes[2].Note, "reaches it at a URL") {
		t.Errorf("notes %q", notes)
	}
	for _, kept := range []string{"// 💡 Inputs", "/* \"off\": {\"command\": \"node\", \"args\": [\"off.js\"]}, */", "\"${input:perplexity-key}\",\n\t\t\t},\n\t\t},"} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("lost %q:\n%s", kept, out)
		}
	}
	again, _, err := WrapHostConfig(out, jsoncOptions)
	if err != nil || !bytes.Equal(again, out) {
		t.Errorf("a second wrap changed the file: %v\n%s", err, again)
	}
	back, _, err := WrapHostConfig(out, WrapOptions{Unwrap: true})
	if err != nil || string(back) != vscodeConfig {
		t.Errorf("unwrap did not give the file back: %v\n%s", err, back)
	}
}

// Bad JSONC is named where it goes wrong, at the line and column of the
// user's file.
func TestWrapHostConfig_BadJSONC(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"comment never closed", "{\n  \"servers\": {} /* open\n}", "not JSON: 2:17: a /* comment is never closed"},
		{"string broken by a line end", "{\n  \"servers\": {\"a\": {\"command\": \"no\nde\"}}}", `not JSON: invalid character '\n' in string literal`},
		{"comma with nothing before it", `{"servers": {,}}`, `not JSON: invalid character ',' looking for beginning of object key string`},
		{"two commas", `{"servers": {"a": {"command": "x", "args": ["a",,]}}}`, `not JSON: invalid character ',' looking for beginning of value`},
		{"a lone slash", `{"servers": {} / }`, `not JSON: invalid character '/' after object key:value pair`},
		{"comment only", "// nothing\n", "not JSON: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := WrapHostConfig([]byte(tt.config), jsoncOptions)
			if err == nil || err.Error() != tt.want || out != nil {
				t.Errorf("%v (wrote %q), want %q", err, out, tt.want)
			}
		})
	}
}

// FuzzStripJSONC: blanking comments and trailing commas keeps every
// offset and line, and leaves JSON as it was.
func FuzzStripJSONC(f *testing.F) {
	for _, s := range []string{vscodeConfig, claudeConfig, `{"a": [1, 2,], /* x */ "b": "//",}`, "/* open", `"\`, "[1,,]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		plain, err := stripJSONC(b)
		if err != nil {
			var syn *ConfigSyntaxError
			if !asSyntaxError(err, &syn) || syn.Line < 1 || syn.Col < 1 {
				t.Fatalf("%v", err)
			}
			return
		}
		if len(plain) != len(b) {
			t.Fatalf("length %d, want %d", len(plain), len(b))
		}
		for i := range b {
			if (b[i] == '\n') != (plain[i] == '\n') || (plain[i] != b[i] && plain[i] != ' ') {
				t.Fatalf("byte %d: %q became %q", i, b[i], plain[i])
			}
		}
		if json.Valid(b) && !bytes.Equal(plain, b) {
			t.Fatalf("JSON changed:\n%q\n%q", b, plain)
		}
	})
}

// FuzzWrapHostConfig: whatever the configuration, wrap writes JSONC,
// wrapping that again changes nothing, and unwrapping it writes JSONC.
func FuzzWrapHostConfig(f *testing.F) {
	for _, s := range []string{vscodeConfig, claudeConfig, `{"servers": {"a": {"command": "x", "args": [/*a*/],},},}`, "{\"servers\": {\"a\": {\n \"args\": [],\n \"command\": \"x\" // c\n}}}", `{"servers": {"a": {"command": "\/x\u0079", "args": [/*a*/]}}}`, `{"servers": {"a": {"command": "mcpspy", "args": ["record", "--unwrap-keeps-args", "--", "\u0078"]}}}`, `{"mcp": {"servers": {"a": {"command": "x"}}}, "projects": {"/a/b": {"mcpServers": {"a": {"command": "x", "args": []}}}, "/c/b": {"mcpServers": {}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _, err := WrapHostConfig(b, jsoncOptions)
		if err != nil {
			return
		}
		plain, err := stripJSONC(out)
		if err != nil || !json.Valid(plain) {
			t.Fatalf("wrote no JSONC: %v\n%q\n%q", err, b, out)
		}
		again, _, err := WrapHostConfig(out, jsoncOptions)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("a second wrap: %v\n%q\n%q", err, out, again)
		}
		back, _, err := WrapHostConfig(out, WrapOptions{Unwrap: true})
		if err != nil {
			t.Fatalf("unwrap: %v\n%q", err, out)
		}
		if plain, err := stripJSONC(back); err != nil || !json.Valid(plain) {
			t.Fatalf("unwrap wrote no JSONC: %v\n%q\n%q", err, out, back)
		}
	})
}

func asSyntaxError(err error, target **ConfigSyntaxError) bool { return errors.As(err, target) }
