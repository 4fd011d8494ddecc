package recorder

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every server list a host keeps is wrapped, in files shaped as the hosts
// write them: Claude Code's ~/.claude.json, with the user's servers at the
// top and each project's under "projects" (the same server name in three
// projects, two of them directories named "app"), and VS Code's user
// settings.json, JSONC, with its servers under "mcp". Each wrapped entry
// starts its own command line behind mcpspy record, as the session its
// note names; a second wrap changes nothing; unwrap gives back the file
// byte for byte.
func TestWrapHostConfig_Shapes(t *testing.T) {
	type server struct {
		path    []string // to the entry, from the file's top
		project string   // the note's
		note    string   // what becomes of it; a wrapped one records as session
		session string   // "" when it is left as it is
	}
	wrapped := func(session string) string { return `records into /c.db as session "` + session + `"` }
	tests := []struct {
		name, file string
		servers    []server
	}{
		{
			"Claude Code's ~/.claude.json", "claude.json",
			[]server{
				{[]string{"mcpServers", "fetch"}, "", wrapped("fetch"), "fetch"},
				{[]string{"projects", "/home/me/src/app", "mcpServers", "memory"}, "/home/me/src/app", wrapped("memory@src/app"), "memory@src/app"},
				{[]string{"projects", "/home/me/work/app", "mcpServers", "memory"}, "/home/me/work/app", wrapped("memory@work/app"), "memory@work/app"},
				{[]string{"projects", "/home/me/src/site", "mcpServers", "sentry"}, "/home/me/src/site", "--session sentry@site --upstream https://mcp.sentry.dev/mcp", ""},
				{[]string{"projects", "/home/me/src/site", "mcpServers", "memory"}, "/home/me/src/site", wrapped("memory@site"), "memory@site"},
			},
		},
		{
			"VS Code's settings.json", "vscode-settings.json",
			[]server{
				{[]string{"mcp", "servers", "git"}, "", wrapped("git"), "git"},
				{[]string{"mcp", "servers", "github"}, "", "--session github --header 'Authorization: Bearer ${input:github-token}' --upstream https://api.githubcopilot.com/mcp/", ""},
				{[]string{"mcp", "servers", "time"}, "", wrapped("time"), "time"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config, err := os.ReadFile(filepath.Join("testdata", "hostconfig", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			out, notes, err := WrapHostConfig(config, jsoncOptions)
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) != len(tt.servers) {
				t.Errorf("%d notes, want %d: %q", len(notes), len(tt.servers), notes)
			}
			for i, s := range tt.servers {
				name := s.path[len(s.path)-1]
				if i < len(notes) && (notes[i].Server != name || notes[i].Project != s.project || !strings.Contains(notes[i].Note, s.note)) {
					t.Errorf("note %d: %+v, want server %q of project %q: %q", i, notes[i], name, s.project, s.note)
				}
				own, got := entryCommandLine(t, config, s.path), entryCommandLine(t, out, s.path)
				want := own
				if s.session != "" {
					want = append([]string{"/bin/mcpspy", "record", "-o", "/c.db", "--session", s.session, "--"}, own...)
					if len(own) == 1 { // "args": [] of its own, kept for unwrap
						want = slices.Insert(want, 2, KeepArgsFlag)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q starts %q, want %q", s.path, got, want)
				}
			}
			checkRewrapUnwrap(t, config, out)
		})
	}
}

// entryCommandLine is the command and args of the server entry at path in
// a configuration, as the host reads them.
func entryCommandLine(t *testing.T, config []byte, path []string) []string {
	t.Helper()
	plain, err := stripJSONC(config)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(plain, &v); err != nil {
		t.Fatalf("%v\n%s", err, config)
	}
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	entry, _ := v.(map[string]any)
	if entry == nil {
		t.Fatalf("no entry at %q", path)
	}
	line := []string{}
	if c, ok := entry["command"].(string); ok {
		line = append(line, c)
	}
	args, _ := entry["args"].([]any)
	for _, a := range args {
		line = append(line, a.(string))
	}
	return line
}

// A file with none of the server lists wrap knows is refused with a
// message that names them all; a list named as a host names it that is
// not an object is refused where it is.
func TestWrapHostConfig_UnknownShapes(t *testing.T) {
	noServers, err := os.ReadFile(filepath.Join("testdata", "hostconfig", "no-servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, config, want string }{
		{"VS Code settings.json without servers", string(noServers), ErrNotHostConfig.Error()},
		{"projects without mcpServers", `{"projects": {"/a": {"allowedTools": []}}}`, ErrNotHostConfig.Error()},
		{"projects not an object", `{"projects": ["/a"]}`, ErrNotHostConfig.Error()},
		{"mcp not an object", `{"mcp": true}`, ErrNotHostConfig.Error()},
		{"mcp.servers not an object", `{"mcp": {"servers": []}}`, `"mcp"."servers" is not an object`},
		{"a project's mcpServers not an object", `{"mcpServers": {}, "projects": {"/home/me/app": {"mcpServers": null}}}`, `"projects"."/home/me/app"."mcpServers" is not an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := WrapHostConfig([]byte(tt.config), jsoncOptions)
			if err == nil || err.Error() != tt.want || out != nil {
				t.Errorf("%v (wrote %q), want %q", err, out, tt.want)
			}
		})
	}
	for _, shape := range []string{`"mcpServers"`, `"servers"`, `"mcp": {"servers"}`, `"projects": {DIR: {"mcpServers"}}`} {
		if !strings.Contains(ErrNotHostConfig.Error(), shape) {
			t.Errorf("%q does not name %s", ErrNotHostConfig, shape)
		}
	}
	if _, _, err := WrapHostConfig(noServers, jsoncOptions); !errors.Is(err, ErrNotHostConfig) {
		t.Errorf("%v, want ErrNotHostConfig", err)
	}
}

// A project's servers record as SERVER@LABEL: the directory's base name,
// with as many elements before it as tell apart projects that share it.
func TestProjectLabels(t *testing.T) {
	tests := []struct {
		name       string
		dirs, want []string
	}{
		{"base names", []string{"/home/me/app", "/home/me/site"}, []string{"app", "site"}},
		{"a shared base name", []string{"/home/me/src/app", "/home/me/work/app", "/srv/site"}, []string{"src/app", "work/app", "site"}},
		{"shared further up", []string{"/a/x/app", "/b/x/app"}, []string{"a/x/app", "b/x/app"}},
		{"one path ends another", []string{"/app", "/srv/app"}, []string{"/app", "srv/app"}},
		{"a trailing slash", []string{"/home/me/app/"}, []string{"app"}},
		{"Windows", []string{`C:\Users\me\app`, "C:/Users/you/app"}, []string{"me/app", "you/app"}},
		{"the root", []string{"/"}, []string{"/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := projectLabels(tt.dirs); !slices.Equal(got, tt.want) {
				t.Errorf("projectLabels(%q) = %q, want %q", tt.dirs, got, tt.want)
			}
		})
	}
}

// The command wrap suggests for a server the host reaches at a URL is one
// a shell runs as written: a session name with a space (from a project
// directory's name) and a URL with a query are quoted.
func TestWrapHostConfig_URLServerCommandQuoted(t *testing.T) {
	config := []byte(`{"projects": {"/home/me/My App": {"mcpServers": {"remote": {"type": "http", "url": "https://example.com/mcp?team=a&b=1"}}}}}`)
	_, notes, err := WrapHostConfig(config, WrapOptions{Mcpspy: "/opt/my tools/mcpspy", Cassette: "/c.db"})
	if err != nil {
		t.Fatal(err)
	}
	want := `'/opt/my tools/mcpspy' record -o /c.db --session 'remote@My App' --upstream 'https://example.com/mcp?team=a&b=1'`
	if len(notes) != 1 || !strings.Contains(notes[0].Note, want) {
		t.Errorf("notes %+v; want one that says %s", notes, want)
	}
}
