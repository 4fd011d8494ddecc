package mcpinspector_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// failsWith checks that an inspector run failed (exit 1) with a message
// holding want.
func failsWith(t *testing.T, r run, want string) {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(r.err, &exit) || exit.ExitCode() != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("inspector ended with %v, stdout %q; want exit 1 with %q; stderr:\n%s", r.err, r.stdout, want, r.stderr)
	}
}

// The inspector's README says that what follows "--" goes to the server,
// but its bin and its CLI proper each take the first "--" as the end of
// their own options and drop it: a server command line that holds one
// (mcpspy record's, before the server it wraps) loses it. mcpspy record
// used to refuse a command without its "--" (the user saw only
// "Connection closed": the inspector hides stderr); it now takes the
// server's command from the first argument that is not one of its flags,
// so the inspector in front of mcpspy works as its README says. A
// configuration that `mcpspy wrap` wrote still fails: the "--" from the
// file splits the inspector's own arguments, and --method lands among the
// server's. So `mcp-inspector --cli --config` cannot use a host's
// mcp.json once wrapped.
func TestInspector_EatsDoubleDash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	server := peertest.ServerEverything(t, "stdio")
	mcpspy := peertest.Binary(t, "mcpspy")
	t.Run("command line", func(t *testing.T) {
		t.Parallel()
		args := append([]string{mcpspy, "record", "-o", db, "--"}, server...)
		out := mustInspect(t, append(args, listTools...)...)
		if names := toolNames(t, []byte(out)); !slices.Contains(names, "echo") {
			t.Errorf("tools/list through mcpspy, its -- dropped: %q", names)
		}
		tape, err := store.Load(db)
		if err != nil || len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) == 0 {
			t.Fatalf("mcpspy recorded nothing with its -- dropped: %v", err)
		}
	})
	t.Run("mcpspy wrap's config", func(t *testing.T) {
		t.Parallel()
		cfg := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"everything":{"command":"node","args":["server.js"]}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(mcpspy, "wrap", "--cassette", filepath.Join(t.TempDir(), "w.db"), "-o", cfg, cfg).CombinedOutput(); err != nil {
			t.Fatalf("mcpspy wrap: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), `"--",`) {
			t.Fatalf("mcpspy wrap wrote no --:\n%s", b)
		}
		failsWith(t, inspect(t, append([]string{"--config", cfg, "--server", "everything"}, listTools...)...),
			"Method is required")
	})
}

// The inspector's bin takes --server-url, but hands it on only to the web
// UI: in --cli mode the URL must be the first argument, as its README
// shows, and with --server-url alone the CLI proper has no target.
func TestInspector_ServerURLFlag(t *testing.T) {
	t.Parallel()
	// Nothing listens there; nothing tries to connect.
	r := inspect(t, append([]string{"--transport", "http", "--server-url", "http://127.0.0.1:9/mcp"}, listTools...)...)
	failsWith(t, r, "missing required argument 'target'")
}

// The inspector's CLI looks for its package.json to name itself: it tests
// "../package.json" against the working directory, but imports it
// relative to its own file. Run where the parent directory holds a
// package.json (any subdirectory of a Node project), it fails before it
// starts the server. The tests run it in a t.TempDir.
func TestInspector_ParentPackageJSON(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name":"someproject","version":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(project, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// The server would leave a file behind if the inspector started it.
	// (Not node -e: the inspector's bin takes -e for an environment
	// variable.)
	scripts := t.TempDir()
	started := filepath.Join(scripts, "started")
	script := filepath.Join(scripts, "server.js")
	if err := os.WriteFile(script, []byte("require('fs').writeFileSync(__dirname + '/started', '')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	server := []string{peertest.Node(t), script}
	failsWith(t, inspectIn(t, sub, append(server, listTools...)...), "Cannot find module")
	if _, err := os.Stat(started); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the inspector started its server: %v", err)
	}
}
