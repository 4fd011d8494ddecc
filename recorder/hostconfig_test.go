package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// claudeConfig is a Claude Desktop configuration, with a member mcpspy
// has no business with on either side of the servers.
const claudeConfig = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"DEBUG": "1"}},
    "remote": {"url": "https://example.com/mcp"},
    "bare": {"command": "weather-server"}
  },
  "theme": "dark"
}`

func TestWrapHostConfig(t *testing.T) {
	o := WrapOptions{Mcpspy: "/usr/local/bin/mcpspy", Cassette: "/home/me/mcp.db"}
	out, notes, err := WrapHostConfig([]byte(claudeConfig), o)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		GlobalShortcut string
		Theme          string
		McpServers     map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
			URL     string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	files := got.McpServers["files"]
	if files.Command != o.Mcpspy || strings.Join(files.Args, " ") != "record -o /home/me/mcp.db --session files -- npx -y @modelcontextprotocol/server-filesystem /tmp" || files.Env["DEBUG"] != "1" {
		t.Errorf("files: %+v", files)
	}
	if bare := got.McpServers["bare"]; strings.Join(bare.Args, " ") != "record -o /home/me/mcp.db --session bare -- weather-server" {
		t.Errorf("bare: %+v", bare)
	}
	if remote := got.McpServers["remote"]; remote.URL != "https://example.com/mcp" || remote.Command != "" {
		t.Errorf("remote: %+v", remote)
	}
	if got.GlobalShortcut != "Ctrl+Space" || got.Theme != "dark" {
		t.Errorf("the rest of the file: %+v", got)
	}
	if i, j := bytes.Index(out, []byte(`"globalShortcut"`)), bytes.Index(out, []byte(`"theme"`)); i < 0 || j < i {
		t.Errorf("members out of order:\n%s", out)
	}
	wantNotes := map[string]string{
		"files":  `records into /home/me/mcp.db as session "files"`,
		"remote": "record it with\n    /usr/local/bin/mcpspy record -o /home/me/mcp.db --session remote --upstream https://example.com/mcp",
		"bare":   `records into /home/me/mcp.db as session "bare"`,
	}
	for _, n := range notes {
		if !strings.Contains(n.Note, wantNotes[n.Server]) {
			t.Errorf("%s: %q, want %q", n.Server, n.Note, wantNotes[n.Server])
		}
	}

	// A build with another name is recognised as well.
	other, _, err := WrapHostConfig(out, WrapOptions{Mcpspy: "/opt/mcpspy-1.2", Cassette: o.Cassette})
	if err != nil || !bytes.Equal(other, out) {
		t.Errorf("wrapping with another mcpspy build: %v\n%s", err, other)
	}

	// Wrapping again changes nothing; unwrapping gives the commands back.
	again, notes, err := WrapHostConfig(out, o)
	if err != nil || !bytes.Equal(again, out) || !strings.Contains(notes[0].Note, "mcpspy records it already") {
		t.Errorf("a second wrap: %v, notes %v\n%s", err, notes, again)
	}
	back, _, err := WrapHostConfig(out, WrapOptions{Unwrap: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != claudeConfig {
		t.Errorf("unwrap did not give the configuration back:\n got %s\nwant %s", back, claudeConfig)
	}
}

// VS Code keeps its servers under "servers", with a type.
func TestWrapHostConfig_VSCode(t *testing.T) {
	config := `{"servers": {"git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]}}, "inputs": []}`
	out, _, err := WrapHostConfig([]byte(config), WrapOptions{Mcpspy: "mcpspy", Cassette: "/c.db"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers map[string]struct {
			Type, Command string
			Args          []string
		}
		Inputs []any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if git := got.Servers["git"]; git.Type != "stdio" || strings.Join(git.Args, " ") != "record -o /c.db --session git -- uvx mcp-server-git" || got.Inputs == nil {
		t.Errorf("%s", out)
	}
}

func TestWrapHostConfig_BadInput(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{`{"mcpServers": {}, } /* open`, "not JSON: 1:22: a /* comment is never closed"},
		{`{"mcpServers": {}, , }`, "not JSON"},
		{`[1, 2]`, "not an MCP host configuration"},
		{`{"servers2": {}}`, "not an MCP host configuration"},
		{`{"mcpServers": [1]}`, `"mcpServers" is not an object`},
	} {
		_, _, err := WrapHostConfig([]byte(tc.config), WrapOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.config, err, tc.want)
		}
	}
	if !errors.Is(func() error { _, _, err := WrapHostConfig([]byte(`{}`), WrapOptions{}); return err }(), ErrNotHostConfig) {
		t.Error("want ErrNotHostConfig")
	}
}

// An entry wrap cannot start is left as it is, with a note that says why.
func TestWrapHostConfig_OddEntries(t *testing.T) {
	tests := []struct {
		name, entry, want string
	}{
		{"not an object", `3`, "left as it is: not an object"},
		{"no command", `{}`, "left as it is: no command to start"},
		{"command not a string", `{"command": 5}`, "left as it is: its command is not a string"},
		{"empty command", `{"command": ""}`, "left as it is: its command is empty"},
		{"args not strings", `{"command": "node", "args": [1]}`, "left as it is: its args are not an array of strings"},
		{"args null", `{"command": "node", "args": null}`, "left as it is: its args are not an array of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := `{"mcpServers": {"a": ` + tt.entry + `}}`
			out, notes, err := WrapHostConfig([]byte(config), WrapOptions{Mcpspy: "mcpspy", Cassette: "/c.db"})
			if err != nil || len(notes) != 1 || notes[0].Note != tt.want {
				t.Fatalf("%v, notes %q, want %q", err, notes, tt.want)
			}
			var got, want any
			_ = json.Unmarshal(out, &got)
			_ = json.Unmarshal([]byte(config), &want)
			if a, b := fmt.Sprint(got), fmt.Sprint(want); a != b {
				t.Errorf("the entry changed: %s, want %s", a, b)
			}
		})
	}
}

// wrap keeps the file as written: what wrap and unwrap write anew is not
// HTML-escaped as encoding/json does by default, so "<", ">" and "&" in
// an argument or a server's name come back as they were.
func TestWrapHostConfig_NoHTMLEscaping(t *testing.T) {
	config := `{"mcpServers": {"a<&>b": {"command": "srv&co", "args": ["--q=<a&b>"]}}}`
	for _, o := range []WrapOptions{
		{Mcpspy: "/bin/mcpspy", Cassette: "/tmp/a&b.db"},
		{Unwrap: true},
	} {
		out, _, err := WrapHostConfig([]byte(config), o)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte(`\u00`)) || !bytes.Contains(out, []byte(`"--q=<a&b>"`)) || !bytes.Contains(out, []byte(`"srv&co"`)) || !bytes.Contains(out, []byte(`"a<&>b"`)) {
			t.Errorf("unwrap %v: escaped:\n%s", o.Unwrap, out)
		}
		if !o.Unwrap && (!bytes.Contains(out, []byte(`"/tmp/a&b.db"`)) || !bytes.Contains(out, []byte(`"a<&>b",`))) {
			t.Errorf("wrap: escaped:\n%s", out)
		}
		config = string(out) // unwrap what was wrapped
	}
}
