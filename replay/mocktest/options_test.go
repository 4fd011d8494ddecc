package mocktest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// lineClient speaks raw JSON-RPC lines to a Server's Pipes.
type lineClient struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

func pipesClient(t *testing.T, srv *mocktest.Server) *lineClient {
	in, out := srv.Pipes()
	t.Cleanup(func() { in.Close() })
	return &lineClient{t: t, in: in, out: bufio.NewScanner(out)}
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *lineClient) recv() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("the server said nothing more: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("%s: %v", c.out.Bytes(), err)
	}
	return m
}

// slowForecast is the example cassette with a server that took 400 ms
// to answer the call (asked at .003).
var slowForecast = strings.Replace(cassette, `"time":"2026-11-21T10:00:00.004000000Z"`, `"time":"2026-11-21T10:00:00.403000000Z"`, 1)

// WithTiming("recorded") keeps the recorded server's 400 ms before its
// answer; a mode replay does not know fails the test that asked for it.
func TestWithTiming(t *testing.T) {
	if !strings.Contains(slowForecast, "10:00:00.403") {
		t.Fatal("the example cassette's answer is no longer where slowForecast delays it")
	}
	path := filepath.Join(t.TempDir(), "slow.jsonl")
	if err := os.WriteFile(path, []byte(slowForecast), 0o600); err != nil {
		t.Fatal(err)
	}

	srv := mocktest.NewFromCassette(t, path, mocktest.WithTiming("recorded"))
	c := pipesClient(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	asked := time.Now()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}`)
	answer := c.recv()
	if took, recorded := time.Since(asked), 400*time.Millisecond; took < recorded {
		t.Errorf("answered after %s, want the recorded %s at least", took, recorded)
	}
	if answer["id"] != 2.0 || answer["result"] == nil {
		t.Errorf("answer %v, want the recorded result", answer)
	}

	f := &fatalTB{failureTB{TB: t}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		mocktest.NewFromCassette(f, path, mocktest.WithTiming("slow"))
	}()
	<-done
	if got, want := f.failures(), `mocktest: unknown timing "slow" (want none or recorded)`; got != want {
		t.Errorf("WithTiming(slow) failed with %q, want %q", got, want)
	}
}

// WithCallTimeout bounds the wait for a host that never answers the
// server's question: the server gives up after it, tells the host, and
// answers the call, where the default would wait 10 s.
func TestWithCallTimeout(t *testing.T) {
	srv := mocktest.NewFromCassette(t, filepath.Join("..", "..", "cassettes", "script-elicit.yaml"), mocktest.WithCallTimeout(200*time.Millisecond))
	c := pipesClient(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"mute","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`)
	if ask := c.recv(); ask["method"] != "elicitation/create" {
		t.Fatalf("first %v, want the question", ask)
	}
	cancelled := c.recv() // the host says nothing
	params, _ := cancelled["params"].(map[string]any)
	if reason, _ := params["reason"].(string); cancelled["method"] != "notifications/cancelled" || !strings.Contains(reason, "no reply within 200ms") {
		t.Errorf("after the timeout %v, want notifications/cancelled saying it waited 200ms", cancelled)
	}
	if answer := c.recv(); answer["id"] != 2.0 {
		t.Errorf("then %v, want the call's answer", answer)
	}

	for _, d := range []time.Duration{0, -time.Second} {
		func() {
			defer func() {
				if r, want := recover(), "mocktest: WithCallTimeout("+d.String()+"): want a time above 0"; r != want {
					t.Errorf("WithCallTimeout(%s) panicked with %v, want %q", d, r, want)
				}
			}()
			mocktest.WithCallTimeout(d)
		}()
	}
}

// Options that change only how recordings answer fail a test whose
// sources are all scripts, where they would do nothing: a test asking
// for strict matching of a script would believe it had it.
func TestOptions_CassetteOnlyWithScript(t *testing.T) {
	script := filepath.Join("..", "..", "cassettes", "script-basic.yaml")
	anyCall := func(live, recorded replay.MatchRequest) bool { return true }
	tests := []struct {
		name string
		opt  mocktest.Option
		want string
	}{
		{"WithMatch strict", mocktest.WithMatch("strict"), `mocktest: match mode "strict": --match applies to cassettes (.db, .jsonl, .har), and no source is one: a script's when says what matches`},
		{"WithTiming recorded", mocktest.WithTiming("recorded"), `mocktest: timing "recorded": --timing applies to cassettes (.db, .jsonl, .har), and no source is one: a script's delay says how long an answer takes`},
		{"WithMatcher", mocktest.WithMatcher(anyCall), `mocktest: a MatchFunc applies to cassettes (.db, .jsonl, .har), and no source is one: a script's when says what matches`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fatalTB{failureTB{TB: t}}
			done := make(chan struct{})
			go func() {
				defer close(done)
				mocktest.NewFromCassette(f, script, tt.opt)
			}()
			<-done
			if got := f.failures(); got != tt.want {
				t.Errorf("failed with %q, want %q", got, tt.want)
			}
		})
	}
	// Beside a cassette they apply, the script layered over it.
	path := filepath.Join(t.TempDir(), "weather.jsonl")
	if err := os.WriteFile(path, []byte(cassette), 0o600); err != nil {
		t.Fatal(err)
	}
	mocktest.New(t, mocktest.Load(t, script, path), mocktest.WithMatch("strict"), mocktest.WithTiming("recorded"), mocktest.WithMatcher(anyCall))
}
