package recorder

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// Wrap then unwrap gives back the user's file byte for byte, whatever
// the user wrote as command and args: an empty args list stays, a server
// without args gets none, and a command or argument written with escapes
// JSON does not need keeps them. Each wrapped entry still starts the
// server with the same command line.
func TestWrapHostConfig_RoundTrip(t *testing.T) {
	tests := []struct{ name, config string }{
		{"empty args", `{"mcpServers": {"a": {"command": "node", "args": []}}}`},
		{"empty args with blanks inside", `{"mcpServers": {"a": {"command": "node", "args": [ ], "env": {}}}}`},
		{"absent args", `{"mcpServers": {"a": {"command": "node"}}}`},
		{"absent args, last member with a trailing comma", "{\"servers\": {\"a\": {\n  \"command\": \"node\",\n}}}"},
		{"escaped command", `{"mcpServers": {"a": {"command": "C:\/bin\/srv", "args": ["x"]}}}`},
		{"command with a \\u escape and no args", `{"mcpServers": {"a": {"command": "\u0073rv"}}}`},
		{"command with escapes it needs", `{"mcpServers": {"a": {"command": "C:\\Program Files\\srv.exe", "args": ["\"q\""]}}}`},
		{"escaped args", `{"mcpServers": {"a": {"command": "srv", "args": ["\u002dv", "a\/b", "\u00e9"]}}}`},
		{"escaped command and empty args", `{"mcpServers": {"a": {"command": "\/usr\/bin\/srv", "args": []}}}`},
		{
			"JSONC: empty args, one per line, with a comment inside",
			"{\n  \"servers\": {\n    \"a\": {\n      \"command\": \"node\", // from PATH\n      \"args\": [\n        // none yet\n      ],\n    },\n  },\n}\n",
		},
		{
			"JSONC: escaped command between comments, empty args last",
			"{\"servers\": {\"a\": {\n  /* which */ \"command\": /* here */ \"\\u006eode\" /* there */,\n  \"args\": [/* none */] // last\n}}}",
		},
		{
			"JSONC: escaped command and args one per line",
			"{\"servers\": {\"a\": {\n  \"command\": \"n\\/ode\",\n  \"args\": [\n    \"s\\u002ejs\", // script\n    \"--port\", \"1\",\n  ],\n}}}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := WrapHostConfig([]byte(tt.config), jsoncOptions)
			if err != nil {
				t.Fatal(err)
			}
			if want, got := commandLine(t, []byte(tt.config)), commandLine(t, out); got[0] != jsoncOptions.Mcpspy || got[1] != "record" || !slices.Equal(got[len(got)-len(want):], want) || got[len(got)-len(want)-1] != "--" {
				t.Errorf("wrapped, the host starts %q; want mcpspy record … -- %q", got, want)
			}
			checkRewrapUnwrap(t, []byte(tt.config), out)
		})
	}
}

// A configuration an older mcpspy wrapped has no --unwrap-keeps-args: it
// cannot tell an empty args list from none, so unwrap drops an args list
// it empties, as it always did, and keeps one with the server's own.
func TestWrapHostConfig_UnwrapOlderForm(t *testing.T) {
	tests := []struct{ name, wrapped, want string }{
		{
			"no args of the server's own",
			`{"mcpServers": {"a": {"command": "/bin/mcpspy", "args": ["record", "-o", "/c.db", "--session", "a", "--", "node"]}}}`,
			`{"mcpServers": {"a": {"command": "node"}}}`,
		},
		{
			"args of the server's own",
			`{"mcpServers": {"a": {"command": "/bin/mcpspy", "args": ["record", "-o", "/c.db", "--session", "a", "--", "node", "s.js"]}}}`,
			`{"mcpServers": {"a": {"command": "node", "args": ["s.js"]}}}`,
		},
		{
			// A session named as the flag is no flag: the name follows
			// --session.
			"a session named --unwrap-keeps-args",
			`{"mcpServers": {"--unwrap-keeps-args": {"command": "/bin/mcpspy", "args": ["record", "-o", "/c.db", "--session", "--unwrap-keeps-args", "--", "node"]}}}`,
			`{"mcpServers": {"--unwrap-keeps-args": {"command": "node"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			back, _, err := WrapHostConfig([]byte(tt.wrapped), WrapOptions{Unwrap: true})
			if err != nil || string(back) != tt.want {
				t.Errorf("%v:\n got %s\nwant %s", err, back, tt.want)
			}
		})
	}
}

// checkRewrapUnwrap fails unless wrapping wrapped, what wrap made of
// original, again changes nothing, and unwrapping it gives back original
// byte for byte.
func checkRewrapUnwrap(t *testing.T, original, wrapped []byte) {
	t.Helper()
	again, _, err := WrapHostConfig(wrapped, jsoncOptions)
	if err != nil || !bytes.Equal(again, wrapped) {
		t.Errorf("a second wrap changed the file: %v\n%s", err, again)
	}
	back, _, err := WrapHostConfig(wrapped, WrapOptions{Unwrap: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, original) {
		t.Errorf("wrap then unwrap:\n got %q\nwant %q\nwrapped %q", back, original, wrapped)
	}
}

// commandLine is the one server's command and args in a configuration,
// as the host reads them.
func commandLine(t *testing.T, config []byte) []string {
	t.Helper()
	plain, err := stripJSONC(config)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		McpServers, Servers map[string]struct {
			Command string
			Args    []string
		}
	}
	if err := json.Unmarshal(plain, &c); err != nil {
		t.Fatalf("%v\n%s", err, config)
	}
	for _, s := range c.McpServers {
		return append([]string{s.Command}, s.Args...)
	}
	for _, s := range c.Servers {
		return append([]string{s.Command}, s.Args...)
	}
	t.Fatalf("no server in %s", config)
	return nil
}
