package mocktest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/replay/script"
)

// failureTB stands in for a test whose failures the test below reads:
// what the assertion under test reports goes here, not to the real test.
type failureTB struct {
	testing.TB // the real test, for Cleanup, Name and the rest
	mu         sync.Mutex
	errs       []string
}

func (f *failureTB) Helper() {}
func (f *failureTB) Errorf(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, a...))
}

func (f *failureTB) failures() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}

// connect connects a go-sdk client to srv over Transport; the session
// closes, and ctx ends, when the test ends.
func connect(t *testing.T, srv *mocktest.Server) (context.Context, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ctx, cs
}

// callEcho calls the shipped cassette's echo tool once with message. An
// unmatched call gets a JSON-RPC error, returned, which a host may
// swallow.
func callEcho(t *testing.T, srv *mocktest.Server, message string) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cs := connect(t, srv)
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": message}})
}

// AssertNoUnmatched passes a test that used part of a cassette, which
// AssertAllUsed fails, and fails one whose host sent a request nothing
// answered, naming it and the nearest recorded request.
func TestServer_AssertNoUnmatched(t *testing.T) {
	cassette := filepath.Join("..", "..", "cassettes", "everything-stdio.db")

	t.Run("part of the cassette used", func(t *testing.T) {
		f := &failureTB{TB: t}
		srv := mocktest.NewFromCassette(f, cassette)
		if _, err := callEcho(t, srv, "hello from mcptape"); err != nil {
			t.Fatal(err)
		}
		srv.AssertNoUnmatched()
		if got := f.failures(); got != "" {
			t.Errorf("AssertNoUnmatched failed a test whose every request matched:\n%s", got)
		}
		srv.AssertAllUsed() // the contrast: the cassette holds five more calls
		if got := f.failures(); !strings.Contains(got, "recorded but never used") {
			t.Errorf("AssertAllUsed reported %q, want the unused calls", got)
		}
	})

	t.Run("a request nothing matched", func(t *testing.T) {
		f := &failureTB{TB: t}
		srv := mocktest.NewFromCassette(f, cassette)
		if _, err := callEcho(t, srv, "not recorded"); err == nil {
			t.Fatal("a call nothing recorded was answered")
		}
		srv.AssertNoUnmatched()
		got := f.failures()
		for _, want := range []string{
			`mocktest: unmatched tools/call {"arguments":{"message":"not recorded"},"name":"echo"}`,
			`nearest: everything-stdio.db s1#7 tools/call`,
			`+ params.arguments.message="not recorded"`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("failure lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "never used") {
			t.Errorf("AssertNoUnmatched reported unused requests:\n%s", got)
		}
	})
}

// A request whose method nothing recorded or scripted knows has no
// nearest request: the failure says so, instead of an empty "nearest: "
// and a blank line.
func TestServer_AssertNoUnmatched_UnknownMethod(t *testing.T) {
	f := &failureTB{TB: t}
	srv := mocktest.NewFromCassette(f, filepath.Join("..", "..", "cassettes", "everything-stdio.db"))
	ctx, cs := connect(t, srv)
	if _, err := cs.ListPrompts(ctx, nil); err == nil {
		t.Fatal("prompts/list, never recorded, was answered")
	}
	srv.AssertNoUnmatched()
	if got, want := f.failures(), "mocktest: unmatched prompts/list: nothing recorded or scripted answers prompts/list"; got != want {
		t.Errorf("failure %q, want %q", got, want)
	}
}

// A script that has the tool called but no answer of it for the
// arguments answers an isError result, which a host may well take in its
// stride: AssertNoUnmatched and Check fail all the same, saying why.
func TestServer_AssertNoUnmatched_ScriptWithoutAnswer(t *testing.T) {
	f := &failureTB{TB: t}
	srv := mocktest.NewFromCassette(f, filepath.Join("..", "script", "testdata", "no-answer.yaml"))
	ctx, cs := connect(t, srv)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Bergen"}})
	if err != nil || !res.IsError {
		t.Fatalf("want the script's isError result, got %+v %v", res, err)
	}
	const want = `mocktest: unmatched tools/call {"arguments":{"city":"Bergen"},"name":"weather"}: mcpmock script: no answer of tool "weather" matches the arguments {"city":"Bergen"}; nearest: the answer at line 15: arguments.city is "Bergen", want "Oslo"`
	srv.AssertNoUnmatched()
	if got := f.failures(); got != want {
		t.Errorf("AssertNoUnmatched failed with %q, want %q", got, want)
	}
	if err := srv.Check(); err == nil || "mocktest: "+err.Error() != want {
		t.Errorf("Check: %v", err)
	}
}

// A test that ends while a call still waits for its answer (a script's
// delay) never saw that answer: after Close, Check fails naming the
// call, as --strict does.
func TestServer_Check_CallInterrupted(t *testing.T) {
	src, err := script.Parse("slow.yaml", []byte("server: {name: s, version: \"1\"}\ntools:\n  - {name: slow, answers: [{text: done, delay: 1h}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := mocktest.New(t, []replay.Source{src})
	ctx, cs := connect(t, srv)
	go func() { _, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}) }()
	for len(srv.ToolCalls("slow")) == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the call never reached the server")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := srv.Check(); err != nil {
		t.Fatalf("Check while the call waits: %v", err)
	}
	srv.Close()
	// Why: Close ends the client's pipes and the session, in no set order.
	const want = `interrupted before its answer: tools/call {"name":"slow"}: `
	if err := srv.Check(); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Check after Close: %v, want it to begin %q", err, want)
	}
}
