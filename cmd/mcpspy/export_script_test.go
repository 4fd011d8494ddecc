package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// export --script writes a script that loads and answers as the recorded
// server did: from a go-sdk server recorded on stdio, the go-sdk client
// gets the recorded echo back from the script, and a key --redact-value
// names is in neither the script nor its answers.
func TestMcpspy_ExportScript(t *testing.T) {
	const secret = "sk-ABCDEFGHIJKLMNOPQRSTUVWX"
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	recordGoStdio(t, db, nil, nil, nil, func(ctx context.Context, cs *mcp.ClientSession) {
		for _, text := range []string{"hello", "key " + secret} {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	out := filepath.Join(dir, "fake.yaml")
	runText(t, "export", "--script", "--redact-value", keyPattern, "-o", out, db)
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), secret) {
		t.Errorf("the script holds the key:\n%s", text)
	}
	if _, err := script.Load(out); err != nil {
		t.Fatalf("the script does not load: %v\n%s", err, text)
	}
	cs, ctx := goClientOn(t, mocktest.New(t, mocktest.Load(t, out)))
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("go-sdk's client negotiated %s with the script, want 2026-07-28 as with go-sdk's server", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hello" {
		t.Errorf("echo hello from the script: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "not recorded"}})
	if err != nil || !res.IsError {
		t.Errorf("an echo never recorded: %v %+v, want the script's isError when no answer matches", err, res)
	}
}

// The script of a handshake-era server speaks the version it spoke, so
// that go-sdk's client, which asks server/discover (2026-07-28) first,
// falls back to initialize as with the server itself: the shipped
// recording of server-everything, 2025-11-25.
func TestMcpspy_ExportScriptRecordedVersion(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fake.yaml")
	runText(t, "export", "--script", "-o", out, shippedCassette(t, "everything-stdio.db"))
	cs, _ := goClientOn(t, mocktest.New(t, mocktest.Load(t, out)))
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("go-sdk's client negotiated %s with the script, want 2025-11-25 as with server-everything", v)
	}
}

// A session named twice, by id and by name, is one session: the script
// is the one-session script, events and all.
func TestMcpspy_ExportScriptSessionNamedTwice(t *testing.T) {
	shipped := filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db")
	script := func(sessions ...string) string {
		t.Helper()
		args := []string{"export", "--script"}
		for _, s := range sessions {
			args = append(args, "--session", s)
		}
		var out bytes.Buffer
		if err := run(context.Background(), append(args, shipped), streams{In: strings.NewReader(""), Out: &out, Err: io.Discard}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if once, twice := script("s1"), script("s1", "everything"); twice != once {
		t.Errorf("--session s1 --session everything:\n%.200s\nwant what --session s1 gives:\n%.200s", twice, once)
	}
}

// Bad combinations and unknown sessions say what is wrong.
func TestMcpspy_ExportScriptBadInput(t *testing.T) {
	shipped := filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db")
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"with --filter", []string{"export", "--script", "--filter", "error", shipped}, true, "--script makes a script of whole sessions"},
		{"with --salvage", []string{"export", "--script", "--salvage", shipped}, true, "--script makes a script of whole sessions"},
		{"an unknown session", []string{"export", "--script", "--session", "s9", shipped}, false, `no such session "s9"`},
		{"--timing without --script", []string{"export", "--timing", "recorded", shipped}, true, "--timing is for --script"},
		{"an unknown --timing", []string{"export", "--script", "--timing", "fast", shipped}, true, `--timing "fast": want recorded or none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
			var ue *cli.UsageError
			if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v (usage error %v), want %q", tc.args, err, errors.As(err, &ue), tc.want)
			}
			if !tc.usage && !errors.Is(err, store.ErrNoSession) {
				t.Errorf("%v: %v, want ErrNoSession", tc.args, err)
			}
		})
	}
}
